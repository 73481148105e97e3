import { ApiHost } from '../src/main/threads/api.ts';
import { createRecovery } from '../src/workers/api/recovery/index.ts';
import { toolCallEvent } from '../src/workers/api/messages.ts';
import type { LlmEvent, ModelSpec, StreamRequest } from '../src/workers/protocol/api.ts';
import { reply } from '../test/fixtures/fake-llm/reply.ts';
import { startFakeLlm } from '../test/fixtures/fake-llm/server.ts';
import { corpus, corpusTools } from '../test/fixtures/tool-call-text/corpus.ts';
import { median, type Bench, type BenchResult } from './harness.ts';

// Text tool-call recovery (src/workers/api/recovery), against what a stream costs without it:
// - per chunk: an answer without calls (prose, markdown, links, code, JSON in a fence — every
//   opener character) fed in 4-character chunks, as a model streams tokens; baseline: the same
//   chunks passed on as text events. Goal: under 5 µs per chunk.
// - per call: each call of the corpus read from 4-character chunks; baseline: a native call's
//   arguments parsed once (toolCallEvent), what the worker does for a native call anyway.
// - time to the first visible token through the API worker and a loopback fake server, recovery
//   on (toolCallFormat auto) against off (none), for an answer without calls. Goal: no added
//   delay (within 1 ms, the runs interleaved).

const TOOLS = corpusTools();
const ANSWER = [
  'Sure — here is what I found in `src/` after reading the [README](README.md) and a few files.\n\n',
  '## Layout\n\n- `src/ui`: the front-end (Ink, <App/> and friends)\n- `src/main`: the daemon [1]\n',
  '- `src/workers`: API, tools and MCP threads; see {the design} for why.\n\n',
  'The config is YAML; a model entry looks like this:\n\n```yaml\nmodels:\n  local: { provider: ollama }\n```\n\n',
  'and a tool result the model reads comes back as JSON:\n\n```json\n{"ok": true, "output": "a < b && c > d"}\n```\n\n',
  'In TypeScript, `const x: Array<Map<string, number>> = [];` compiles; `a[0]` is undefined.\n',
  'Functions, tools and >>> prompts are all text here; nothing above is a call. TOOL use ends.\n',
].join('');

const chunked = (text: string, size: number): string[] => {
  const chunks: string[] = [];
  for (let i = 0; i < text.length; i += size) chunks.push(text.slice(i, i + size));
  return chunks;
};

/** µs per chunk of `run` over `chunks`, the median of `rounds` passes. */
const perChunk = (chunks: string[], run: (chunks: string[]) => void, rounds = 60): number => {
  const times: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const start = process.hrtime.bigint();
    run(chunks);
    times.push(Number(process.hrtime.bigint() - start) / 1e3 / chunks.length);
  }
  return median(times);
};

const recover = (chunks: string[]): LlmEvent[] => {
  const recovery = createRecovery({ tools: TOOLS, protocol: 'native', newId: () => 'call' });
  const events: LlmEvent[] = [];
  for (const chunk of chunks) events.push(...recovery.feed(chunk));
  events.push(...recovery.finish());
  return events;
};

const passOn = (chunks: string[]): LlmEvent[] => chunks.map((text) => ({ type: 'text', text }));

const chunkRow = (): BenchResult => {
  const chunks = chunked(ANSWER.repeat(20), 4);
  if (recover(chunks).some((e) => e.type !== 'text')) throw new Error('the answer holds a call');
  perChunk(chunks, recover, 10);
  const ours = perChunk(chunks, recover);
  const baseline = perChunk(chunks, passOn);
  return {
    name: 'text tool-call recovery: an answer without calls, per 4-character chunk',
    ours,
    baseline,
    baselineName: 'chunks passed on as text',
    unit: 'µs',
    ratio: ours / baseline,
    goal: '< 5',
  };
};

const callRow = (): BenchResult => {
  const cases = corpus().filter((c) => c.calls.length > 0 && c.family !== 'negative');
  const streams = cases.map((c) => chunked(c.text, 4));
  const natives = cases.flatMap((c) => c.calls.map((call) => JSON.stringify(call.args)));
  const calls = cases.reduce((n, c) => n + c.calls.length, 0);
  const time = (run: () => void): number => {
    const times: number[] = [];
    for (let r = 0; r < 40; r++) {
      const start = process.hrtime.bigint();
      run();
      times.push(Number(process.hrtime.bigint() - start) / 1e3 / calls);
    }
    return median(times);
  };
  const ours = time(() => streams.forEach(recover));
  const baseline = time(() => natives.forEach((raw) => toolCallEvent('call', 'x', raw)));
  return {
    name: `text tool-call recovery: per call read from text (${calls} calls, ${cases.length} corpus cases, 4-character chunks)`,
    ours,
    baseline,
    baselineName: "a native call's arguments parsed",
    unit: 'µs',
    ratio: ours / baseline,
  };
};

/** ms from asking for a stream to its first text event, recovery on (`auto`) or off (`none`). */
const firstTokenRow = async (): Promise<BenchResult> => {
  const llm = await startFakeLlm({ fallback: reply().text(ANSWER, { chunks: 60 }) });
  const host = new ApiHost();
  const spec = (format: 'auto' | 'none'): ModelSpec => ({
    name: `bench-${format}`,
    provider: 'openai',
    baseUrl: `${llm.url}/v1`,
    model: 'fake-model',
    apiKey: 'sk-bench',
    toolProtocol: 'native',
    toolCallFormat: format,
    vision: false,
    reasoning: false,
    retry: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 },
    stallTimeoutMs: 10_000,
  });
  const firstToken = async (format: 'auto' | 'none'): Promise<number> => {
    const request: StreamRequest = {
      model: spec(format),
      messages: [{ role: 'user', content: 'what is in src/?' }],
      tools: TOOLS,
    };
    const start = process.hrtime.bigint();
    let first = Number.NaN;
    for await (const event of host.stream(request))
      if (event.type === 'text' && Number.isNaN(first))
        first = Number(process.hrtime.bigint() - start) / 1e6;
    return first;
  };
  const on: number[] = [];
  const off: number[] = [];
  try {
    for (let i = 0; i < 5; i++) await firstToken(i % 2 ? 'auto' : 'none');
    for (let i = 0; i < 40; i++) {
      on.push(await firstToken('auto'));
      off.push(await firstToken('none'));
    }
  } finally {
    await host.close();
    await llm.close();
  }
  return {
    name: 'time to the first visible token, an answer without calls, recovery on',
    ours: median(on),
    baseline: median(off),
    baselineName: 'recovery off (toolCallFormat: none)',
    unit: 'ms',
    ratio: median(on) / median(off),
    goal: '<= off + 1 ms',
  };
};

const bench: Bench = async () => [chunkRow(), callRow(), await firstTokenRow()];
export default bench;

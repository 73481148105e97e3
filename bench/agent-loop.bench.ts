import path from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import OpenAI from 'openai';
import { startInProcess } from '../src/main/daemon/in-process.ts';
import { Transcript } from '../src/main/engine/transcript.ts';
import { reply } from '../test/fixtures/fake-llm/reply.ts';
import { startFakeLlm } from '../test/fixtures/fake-llm/server.ts';
import { benchWorkspace, median, type Bench, serverBin, fakeModelLines } from './harness.ts';

// Agent-loop overhead per tool step against a zero-latency fake model, in one run:
// - ours: the real engine in-process (API worker, MCP worker, transcripts) runs turns of STEPS tool
//   steps (`everything__echo`, tiny chunks, replies queued in advance) and turns with none; the
//   time per step is the difference divided by STEPS, so per-turn costs cancel out.
// - baseline: what a step cannot do without — the same HTTP requests (the very bodies the engine
//   sent, replayed) streamed with the `openai` client, plus the same tool call made with the raw
//   SDK client against a second copy of the server.
// overhead = ours − baseline; goal ≤ 5 ms.
const everything = serverBin('server-everything');
const STEPS = 20;
const ROUNDS = 7;
const TOOL = 'everything__echo';
const ARGS = { message: 'hi' };

const toolReply = () => reply().tool(TOOL, ARGS, { chunks: 4 }).usage(10, 5);
const answer = () => reply().text('done, all echoed', { chunks: 4 }).usage(10, 5);

const elapsedMs = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;

const bench: Bench = async () => {
  const llm = await startFakeLlm();
  const ws = benchWorkspace(() =>
    [
      ...fakeModelLines(llm.url, 'toolProtocol: native'),
      'agent:',
      `  maxSteps: ${STEPS + 5}`,
      'mcpServers:',
      '  everything:',
      `    command: ${JSON.stringify(process.execPath)}`,
      `    args: [${JSON.stringify(everything)}, stdio]`,
      '',
    ].join('\n'),
  );
  const { base, repo: root, env } = ws;
  const engine = await startInProcess({ root, env });
  const raw = new Client({ name: 'bench', version: '0' });
  await raw.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [everything, 'stdio'],
      stderr: 'ignore',
    }),
  );
  const openai = new OpenAI({ baseURL: `${llm.url}/v1`, apiKey: 'none', maxRetries: 0 });

  try {
    await engine.client.request('mcp/status', { wait: true });
    /** One turn of `steps` tool steps and a final answer, in a new session; ms. */
    const turn = async (steps: number): Promise<number> => {
      const { sessionId } = await engine.client.request('session/open', {});
      llm.queue(...Array.from({ length: steps }, toolReply), answer());
      const start = process.hrtime.bigint();
      const summary = await engine.client.request('session/prompt', {
        sessionId,
        text: 'echo hi a few times',
        yes: true,
        interactive: false,
      });
      const ms = elapsedMs(start);
      if (summary.outcome !== 'answered' || summary.steps !== steps + 1)
        throw new Error(`the turn ended ${summary.outcome} after ${summary.steps} steps`);
      return ms;
    };
    /** The same request body streamed with the openai client, every chunk read; ms. */
    const llmRoundTrip = async (body: Record<string, unknown>): Promise<number> => {
      llm.queue(toolReply());
      const start = process.hrtime.bigint();
      const stream = await openai.chat.completions.create({
        ...(body as unknown as OpenAI.ChatCompletionCreateParamsStreaming),
        stream: true,
      });
      for await (const chunk of stream) void chunk;
      return elapsedMs(start);
    };
    const toolCall = async (): Promise<number> => {
      const start = process.hrtime.bigint();
      await raw.callTool({ name: 'echo', arguments: ARGS });
      return elapsedMs(start);
    };

    // Warm-up: both paths, JIT and connections.
    for (let i = 0; i < 3; i++) await turn(STEPS);
    const warmBody = llm.requests.at(-2)!.body as Record<string, unknown>;
    for (let i = 0; i < 50; i++) {
      await llmRoundTrip(warmBody);
      await toolCall();
    }

    const long: number[] = [];
    const short: number[] = [];
    const http: number[] = [];
    const tool: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const first = llm.requests.length;
      long.push(await turn(STEPS));
      short.push(await turn(0));
      // Replay the tool-step requests of the long turn just measured.
      const bodies = llm.requests.slice(first, first + STEPS).map((r) => r.body as object);
      for (const body of bodies) {
        http.push(await llmRoundTrip(body as Record<string, unknown>));
        tool.push(await toolCall());
      }
    }
    const perStep = (median(long) - median(short)) / STEPS;
    const baseline = median(http) + median(tool);
    const overhead = perStep - baseline;

    // The transcript's durability cost (write + fdatasync per message, two messages per step).
    const transcript = Transcript.open(path.join(base, 'fsync'), 'bench');
    const body = llm.requests.at(-3)!.body as { messages: unknown[] };
    const entry = JSON.stringify(body.messages.at(-1));
    const appendSync: number[] = [];
    for (let i = 0; i < 200; i++) {
      const start = process.hrtime.bigint();
      transcript.append({
        type: 'message',
        time: new Date().toISOString(),
        turn: 1,
        message: { role: 'user', content: entry },
      });
      // Written and fdatasync'd off the main thread; the loop awaits this before each request.
      await transcript.flushed();
      appendSync.push(elapsedMs(start));
    }
    await transcript.close();

    return [
      {
        name: `agent loop time per tool step (${STEPS}-step turns)`,
        ours: perStep,
        baseline,
        baselineName: 'openai client stream + raw SDK call',
        unit: 'ms',
        ratio: perStep / baseline,
        notes: `LLM round trip ${median(http).toFixed(2)} ms + tool ${median(tool).toFixed(2)} ms; turn of ${STEPS} steps ${median(long).toFixed(1)} ms, of 0 steps ${median(short).toFixed(1)} ms`,
      },
      {
        name: 'agent loop overhead per tool step',
        ours: overhead,
        baseline,
        baselineName: 'openai client stream + raw SDK call',
        unit: 'ms',
        ratio: overhead / baseline,
        goal: '<= 5 ms',
        notes: 'time per step minus the direct LLM round trip and the direct tool call',
      },
      {
        name: 'transcript append (write + fdatasync)',
        ours: median(appendSync),
        baseline: perStep,
        baselineName: 'agent loop time per tool step',
        unit: 'ms',
        ratio: median(appendSync) / perStep,
        notes: 'two appends per tool step (assistant message, tool result)',
      },
    ];
  } finally {
    await engine.close();
    await raw.close();
    await llm.close();
    await ws.remove();
  }
};
export default bench;

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decideFromShow } from '../../../src/workers/api/ollama-show.ts';
import { reply } from '../../fixtures/fake-llm/reply.ts';
import { startFakeLlm, type FakeLlm } from '../../fixtures/fake-llm/server.ts';
import {
  callsOf,
  collect,
  READ_FILE,
  reasoningOf,
  request,
  specFor,
  textOf,
  withFakeLlm,
} from './helpers.ts';

// Recovery through the API worker: calls streamed as text by the fake OpenAI-compatible and
// Ollama servers, in random chunk sizes, come out as calls; Ollama's /api/show decides the tool
// protocol of an `auto` model before its first request.

let llm: FakeLlm;
const host = withFakeLlm((started) => (llm = started));

const SHOWN = JSON.parse(
  readFileSync(new URL('../../fixtures/fake-llm/ollama-show/models.json', import.meta.url), 'utf8'),
) as Record<string, unknown>;

describe.each(['openai', 'ollama'] as const)('%s', (provider) => {
  it('runs a call written as text, streamed in random chunks, and keeps the prose before it', async () => {
    const text =
      'Let me read it.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "README.md"}}\n</tool_call>';
    for (const seed of [1, 2, 3]) {
      llm.queue(reply().text(text, { chunks: { random: seed, max: 5 } }));
      const { events, error } = await collect(host.stream(request(specFor(provider, llm))));
      expect(error).toBeUndefined();
      expect(textOf(events)).toBe('Let me read it.\n');
      expect(callsOf(events)).toMatchObject([{ name: 'read_file', args: { path: 'README.md' } }]);
      expect(events.at(-1)).toMatchObject({
        type: 'done',
        stopReason: 'tool-calls',
        toolProtocol: 'native',
      });
    }
  });

  it('reads a call the server filed as reasoning when the reply is only that', async () => {
    llm.queue(
      reply().reasoning(
        'The user wants the README.\n<tool_call>{"name": "read_file", "arguments": {"path": "README.md"}}</tool_call>',
        { chunks: { random: 7 } },
      ),
    );
    const { events } = await collect(host.stream(request(specFor(provider, llm))));
    expect(reasoningOf(events)).toBe('The user wants the README.\n');
    expect(callsOf(events)).toMatchObject([{ name: 'read_file' }]);
    expect(events.at(-1)).toMatchObject({ stopReason: 'tool-calls' });
  });

  it('passes text through untouched under toolCallFormat none', async () => {
    const text = '<tool_call>{"name": "read_file", "arguments": {"path": "a"}}</tool_call>';
    llm.queue(reply().text(text));
    const spec = specFor(provider, llm, { toolCallFormat: 'none' });
    const { events } = await collect(host.stream(request(spec)));
    expect(textOf(events)).toBe(text);
    expect(callsOf(events)).toEqual([]);
  });
});

describe('Ollama /api/show', () => {
  const withModels = () => startFakeLlm({ ollamaModels: SHOWN });

  it('decides the text protocol for a model whose capabilities lack "tools", before asking it', async () => {
    const shown = await withModels();
    try {
      shown.queue(reply().text('TOOL_CALL: {"name": "read_file", "args": {"path": "a"}}'));
      const spec = specFor('ollama', shown, { model: 'gemma3:4b', toolProtocol: 'auto' });
      const { events, error } = await collect(host.stream(request(spec, undefined, [READ_FILE])));
      expect(error).toBeUndefined();
      expect(events[0]).toMatchObject({
        type: 'tool-protocol',
        protocol: 'text',
        reason: expect.stringContaining(
          'no "tools" among gemma3:4b\'s capabilities (completion, vision)',
        ),
      });
      expect(callsOf(events)).toMatchObject([{ name: 'read_file', args: { path: 'a' } }]);
      const [sent] = await shown.waitForRequests(1);
      expect(sent!.body.tools).toBeUndefined();
      expect(JSON.stringify(sent!.body.messages)).toContain('TOOL_CALL:');
      expect(host.usesTextProtocol(spec)).toBe(true);
    } finally {
      await shown.close();
    }
  });

  it('decides native tools for a tool-capable model, and still reads its calls from text', async () => {
    const shown = await withModels();
    try {
      shown.queue(
        reply().text('{"name": "read_file", "arguments": {"path": "a"}}', {
          chunks: { random: 3 },
        }),
      );
      const spec = specFor('ollama', shown, { model: 'qwen2.5-coder:7b', toolProtocol: 'auto' });
      const { events } = await collect(host.stream(request(spec, undefined, [READ_FILE])));
      expect(events.some((e) => e.type === 'tool-protocol')).toBe(false);
      expect(callsOf(events)).toMatchObject([{ name: 'read_file', args: { path: 'a' } }]);
      const [sent] = await shown.waitForRequests(1);
      expect(sent!.body.tools).toHaveLength(1);
    } finally {
      await shown.close();
    }
  });

  it('goes native first when Ollama does not know the model', async () => {
    const shown = await withModels();
    try {
      shown.queue(reply().text('hello'));
      const spec = specFor('ollama', shown, { model: 'not-pulled', toolProtocol: 'auto' });
      const { events } = await collect(host.stream(request(spec, undefined, [READ_FILE])));
      expect(textOf(events)).toBe('hello');
      expect((await shown.waitForRequests(1))[0]!.body.tools).toHaveLength(1);
    } finally {
      await shown.close();
    }
  });
});

describe('decideFromShow', () => {
  it('names the family its template writes calls in, and why', () => {
    expect(decideFromShow('qwen2.5-coder:7b', SHOWN['qwen2.5-coder:7b'])).toEqual({
      protocol: 'native',
      family: 'hermes',
      reason:
        'Ollama lists "tools" among qwen2.5-coder:7b\'s capabilities (completion, tools, insert); its template writes calls as hermes',
    });
    expect(
      decideFromShow('old', { template: '{{ if .Tools }}[TOOL_CALLS]{{ end }}' }),
    ).toMatchObject({
      protocol: 'native',
      family: 'mistral',
    });
    expect(decideFromShow('old', { template: '{{ .Prompt }}' })).toMatchObject({
      protocol: 'text',
    });
  });
});

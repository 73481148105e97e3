import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../../src/workers/protocol/api.ts';
import { noToolSupport, reply } from '../../fixtures/fake-llm/reply.ts';
import type { FakeLlm } from '../../fixtures/fake-llm/server.ts';
import { callsOf, collect, READ_FILE, request, specFor, textOf, withFakeLlm } from './helpers.ts';

// One host (one worker) for the file: each test's server has its own port, so what `auto`
// remembers about one test's model never applies to another's.
let llm: FakeLlm;
const host = withFakeLlm((started) => (llm = started));

/** The system prompt and the user/assistant texts a request carried, whatever the format. */
const transcript = (body: { system?: unknown; messages?: unknown }): string =>
  JSON.stringify([body.system ?? '', body.messages]);

describe.each(['openai', 'anthropic', 'ollama'] as const)('%s', (provider) => {
  it('teaches the format, reads the call, and stops the HTTP stream after it', async () => {
    llm.queue(
      reply()
        .text('Let me look.\n```json\n', { chunks: 2 })
        .textToolCall('read_file', { path: 'a.ts' }, { chunks: 5 })
        .text('```\nTOOL_RESULT: {"name": "read_file", "result": "invented"}')
        .hang(),
    );
    const spec = specFor(provider, llm, { toolProtocol: 'text' });
    const { events, error } = await collect(host.stream(request(spec)));
    expect(error).toBeUndefined();
    expect(textOf(events)).toBe('Let me look.\n');
    expect(callsOf(events)).toMatchObject([{ name: 'read_file', args: { path: 'a.ts' } }]);
    expect(events.at(-1)).toEqual({ type: 'done', stopReason: 'tool-calls', toolProtocol: 'text' });
    const [sent] = await llm.waitForRequests(1);
    expect(sent!.body.tools).toBeUndefined();
    const prompt = transcript(sent!.body);
    expect(prompt).toContain('TOOL_CALL: {\\"name\\": \\"<tool name>\\"');
    expect(prompt).toContain('## read_file');
    expect(await sent!.closed).toEqual({ aborted: true });
  });

  it('sends earlier calls and results back as TOOL_CALL and TOOL_RESULT lines', async () => {
    llm.queue(reply().text('Done.'));
    const messages: ChatMessage[] = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'read a' },
      {
        role: 'assistant',
        content: 'Sure.',
        toolCalls: [{ id: 'c1', name: 'read_file', args: { path: 'a' } }],
      },
      { role: 'tool', toolCallId: 'c1', name: 'read_file', result: { ok: true, output: 'AAA' } },
    ];
    const spec = specFor(provider, llm, { toolProtocol: 'text' });
    const { events } = await collect(host.stream(request(spec, messages)));
    expect(textOf(events)).toBe('Done.');
    const body = (await llm.waitForRequests(1))[0]!.body;
    const text = transcript(body);
    expect(text).toContain('Be brief.');
    expect(text).toContain(
      'Sure.\\nTOOL_CALL: {\\"name\\":\\"read_file\\",\\"args\\":{\\"path\\":\\"a\\"}}',
    );
    expect(text).toContain('TOOL_RESULT: {\\"name\\":\\"read_file\\",\\"result\\":\\"AAA\\"}');
    expect(text).not.toContain('tool_call_id');
    expect(text).not.toContain('tool_result');
  });

  it('turns a malformed call into an event the model can read', async () => {
    llm.queue(reply().text('TOOL_CALL: {"name": "read_file", "args": {path: a}}\nmore'));
    const spec = specFor(provider, llm, { toolProtocol: 'text' });
    const { events, error } = await collect(host.stream(request(spec)));
    expect(error).toBeUndefined();
    const invalid = events.find((e) => e.type === 'tool-call-invalid');
    expect(invalid).toMatchObject({ raw: '{"name": "read_file", "args": {path: a}}' });
    expect(invalid?.type === 'tool-call-invalid' && invalid.message).toContain('not valid JSON');
    expect(events.at(-1)).toMatchObject({ type: 'done', stopReason: 'tool-calls' });
  });
});

describe('auto', () => {
  it.each(['ollama', 'openai'] as const)(
    '%s: falls back to text when the model has no tools, and remembers it',
    async (provider) => {
      llm.queue(
        noToolSupport('gemma:2b'),
        reply().textToolCall('read_file', { path: 'a' }),
        reply().text('second turn'),
      );
      const spec = specFor(provider, llm, { toolProtocol: 'auto' });
      const first = await collect(host.stream(request(spec)));
      expect(first.error).toBeUndefined();
      expect(first.events[0]).toMatchObject({ type: 'tool-protocol', protocol: 'text' });
      expect(callsOf(first.events)).toMatchObject([{ name: 'read_file', args: { path: 'a' } }]);
      expect(first.events.at(-1)).toMatchObject({ type: 'done', toolProtocol: 'text' });
      expect(host.usesTextProtocol(spec)).toBe(true);

      const second = await collect(host.stream(request(spec)));
      expect(second.events.at(-1)).toMatchObject({ type: 'done', toolProtocol: 'text' });
      const [native, text, again] = await llm.waitForRequests(3);
      expect(native!.body.tools).toHaveLength(1);
      expect(text!.body.tools).toBeUndefined();
      expect(again!.body.tools).toBeUndefined();
      expect(llm.requests).toHaveLength(3);
    },
  );

  it('does not fall back for a native model', async () => {
    llm.queue(noToolSupport('gemma:2b'));
    const { error } = await collect(
      host.stream(request(specFor('ollama', llm, { toolProtocol: 'native' }))),
    );
    expect(error).toMatchObject({ code: 'llm-http' });
    expect(error?.message).toContain('does not support tools');
    expect(llm.requests).toHaveLength(1);
  });

  it('uses native tools when they work', async () => {
    llm.queue(reply().tool('read_file', { path: 'a' }));
    const spec = specFor('ollama', llm, { toolProtocol: 'auto' });
    const { events } = await collect(host.stream(request(spec, undefined, [READ_FILE])));
    expect(events.at(-1)).toMatchObject({ type: 'done', toolProtocol: 'native' });
    expect(host.usesTextProtocol(spec)).toBe(false);
  });
});

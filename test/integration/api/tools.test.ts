import { describe, expect, it } from 'vitest';
import type { ChatMessage, ToolSpec } from '../../../src/workers/protocol/api.ts';
import { reply } from '../../fixtures/fake-llm/reply.ts';
import type { FakeLlm } from '../../fixtures/fake-llm/server.ts';
import { callsOf, collect, request, specFor, withFakeLlm } from './helpers.ts';

let llm: FakeLlm;
const host = withFakeLlm((started) => (llm = started));

const LONG_NAME = 'enterprise_github_server__search_repositories_by_topic_and_language_xy';
const SCHEMA = {
  type: 'object',
  properties: {
    mode: { type: 'string', enum: ['fast', 'thorough'], description: 'how hard to look' },
    filter: { $ref: '#/$defs/Filter' },
    limit: { type: 'integer', minimum: 1, maximum: 100 },
  },
  required: ['mode', 'filter'],
  additionalProperties: false,
  $defs: {
    Filter: {
      type: 'object',
      properties: { glob: { type: 'string' }, kind: { enum: ['file', 'dir', null] } },
      required: ['glob'],
    },
  },
};
const TOOLS: ToolSpec[] = [
  { name: LONG_NAME, description: 'Search repositories.', inputSchema: SCHEMA },
  {
    name: 'docs__search',
    description: 'Search docs (server "docs").',
    inputSchema: { type: 'object' },
  },
  {
    name: 'docs__search_a1b2c3',
    description: 'Search docs (server "docs.").',
    inputSchema: { type: 'object' },
  },
];

/** The tools of a recorded request as [name, description, schema], whatever the wire format. */
const sentTools = (body: { tools?: Record<string, unknown>[] }) =>
  (body.tools ?? []).map((t) => {
    const fn = (t['function'] ?? t) as Record<string, unknown>;
    return [fn['name'], fn['description'], fn['parameters'] ?? fn['input_schema']];
  });

const image = { type: 'image' as const, data: 'iVBORw0KGgo=', mimeType: 'image/png' };

const CONVERSATION: ChatMessage[] = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'Read a and b.' },
  {
    role: 'assistant',
    content: 'Reading both.',
    toolCalls: [
      { id: 'call_a', name: 'read_file', args: { path: 'a' } },
      { id: 'call_b', name: 'read_file', args: { path: 'b' } },
    ],
  },
  { role: 'tool', toolCallId: 'call_a', name: 'read_file', result: { ok: true, output: 'AAA' } },
  {
    role: 'tool',
    toolCallId: 'call_b',
    name: 'read_file',
    result: { ok: false, error: { code: 'not-found', message: 'no file b' } },
  },
  { role: 'user', content: 'Thanks.' },
];

const withImage = (): ChatMessage[] => [
  { role: 'user', content: 'Screenshot please.' },
  { role: 'assistant', content: '', toolCalls: [{ id: 'call_s', name: 'shot', args: {} }] },
  {
    role: 'tool',
    toolCallId: 'call_s',
    name: 'shot',
    result: { ok: true, output: 'took it', content: [image] },
  },
];

describe.each(['openai', 'anthropic', 'ollama'] as const)('%s', (provider) => {
  it('sends long, colliding names and a $defs/enum/required schema intact, and reads calls back', async () => {
    llm.queue(
      reply()
        .tool(LONG_NAME, { mode: 'fast', filter: { glob: '*.ts' } })
        .tool('docs__search_a1b2c3', {}),
    );
    const { events } = await collect(
      host.stream(request(specFor(provider, llm), undefined, TOOLS)),
    );
    const [sent] = await llm.waitForRequests(1);
    expect(sentTools(sent!.body)).toEqual(TOOLS.map((t) => [t.name, t.description, t.inputSchema]));
    expect(LONG_NAME).toHaveLength(70);
    expect(callsOf(events).map((c) => c.name)).toEqual([LONG_NAME, 'docs__search_a1b2c3']);
  });

  it('maps system, user, assistant with several calls, and tool results', async () => {
    llm.queue(reply().text('ok'));
    await collect(host.stream(request(specFor(provider, llm), CONVERSATION)));
    const { body } = (await llm.waitForRequests(1))[0]!;
    switch (provider) {
      case 'openai':
        expect(body.messages).toEqual([
          { role: 'system', content: 'You are terse.' },
          { role: 'user', content: 'Read a and b.' },
          {
            role: 'assistant',
            content: 'Reading both.',
            tool_calls: [
              {
                id: 'call_a',
                type: 'function',
                function: { name: 'read_file', arguments: '{"path":"a"}' },
              },
              {
                id: 'call_b',
                type: 'function',
                function: { name: 'read_file', arguments: '{"path":"b"}' },
              },
            ],
          },
          { role: 'tool', tool_call_id: 'call_a', content: 'AAA' },
          { role: 'tool', tool_call_id: 'call_b', content: 'Error (not-found): no file b' },
          { role: 'user', content: 'Thanks.' },
        ]);
        break;
      case 'anthropic':
        expect(body.system).toBe('You are terse.');
        expect(body.messages).toEqual([
          { role: 'user', content: 'Read a and b.' },
          {
            role: 'assistant',
            content: [
              { type: 'text', text: 'Reading both.' },
              { type: 'tool_use', id: 'call_a', name: 'read_file', input: { path: 'a' } },
              { type: 'tool_use', id: 'call_b', name: 'read_file', input: { path: 'b' } },
            ],
          },
          {
            role: 'user',
            content: [
              {
                type: 'tool_result',
                tool_use_id: 'call_a',
                content: [{ type: 'text', text: 'AAA' }],
              },
              {
                type: 'tool_result',
                tool_use_id: 'call_b',
                content: [{ type: 'text', text: 'Error (not-found): no file b' }],
                is_error: true,
              },
            ],
          },
          { role: 'user', content: 'Thanks.' },
        ]);
        break;
      case 'ollama':
        expect(body.messages).toEqual([
          { role: 'system', content: 'You are terse.' },
          { role: 'user', content: 'Read a and b.' },
          {
            role: 'assistant',
            content: 'Reading both.',
            tool_calls: [
              { function: { name: 'read_file', arguments: { path: 'a' } } },
              { function: { name: 'read_file', arguments: { path: 'b' } } },
            ],
          },
          { role: 'tool', content: 'AAA', tool_name: 'read_file' },
          { role: 'tool', content: 'Error (not-found): no file b', tool_name: 'read_file' },
          { role: 'user', content: 'Thanks.' },
        ]);
        break;
    }
  });

  it('gives a tool image to a vision model and a note to others', async () => {
    llm.queue(reply().text('seen'), reply().text('noted'));
    await collect(host.stream(request(specFor(provider, llm, { vision: true }), withImage())));
    await collect(host.stream(request(specFor(provider, llm, { vision: false }), withImage())));
    const [vision, blind] = (await llm.waitForRequests(2)).map((r) => JSON.stringify(r.body));
    expect(vision).toContain('iVBORw0KGgo=');
    expect(vision).not.toContain('image omitted');
    expect(blind).not.toContain('iVBORw0KGgo=');
    expect(blind).toContain('[image omitted (image/png, 0 KB): this model cannot view images]');
  });

  it('turns user images into a note for a model without vision', async () => {
    llm.queue(reply().text('ok'));
    const messages: ChatMessage[] = [
      { role: 'user', content: [{ type: 'text', text: 'What is this?' }, image] },
    ];
    await collect(host.stream(request(specFor(provider, llm), messages)));
    const body = JSON.stringify((await llm.waitForRequests(1))[0]!.body);
    expect(body).toContain('What is this?');
    expect(body).toContain('image omitted');
    expect(body).not.toContain('iVBORw0KGgo=');
  });
});

it('keeps Anthropic thinking with its signature when sending history back', async () => {
  llm.queue(reply().text('ok'));
  const messages: ChatMessage[] = [
    { role: 'user', content: 'q' },
    { role: 'assistant', content: 'a', reasoning: 'because', reasoningSignature: 'sig-1' },
    { role: 'user', content: 'q2' },
  ];
  await collect(
    host.stream(request(specFor('anthropic', llm, { reasoning: true, maxTokens: 4096 }), messages)),
  );
  const { body } = (await llm.waitForRequests(1))[0]!;
  expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
  expect(body.messages[1].content[0]).toEqual({
    type: 'thinking',
    thinking: 'because',
    signature: 'sig-1',
  });
});

it('puts an OpenAI vision model’s tool images in a user message after the results', async () => {
  llm.queue(reply().text('seen'));
  await collect(host.stream(request(specFor('openai', llm, { vision: true }), withImage())));
  const { body } = (await llm.waitForRequests(1))[0]!;
  expect(body.messages.at(-1)).toEqual({
    role: 'user',
    content: [
      { type: 'text', text: 'Images from the shot result (call_s):' },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
    ],
  });
});

import { describe, expect, it } from 'vitest';
import { createRecovery, type RecoveryOptions } from '../../../src/workers/api/recovery/index.ts';
import { MAX_REGION_CHARS } from '../../../src/workers/api/recovery/scan.ts';
import type { LlmEvent, ToolCallFormat } from '../../../src/workers/protocol/api.ts';
import { corpus, corpusTools } from '../../fixtures/tool-call-text/corpus.ts';

const TOOLS = corpusTools();

/** What a stream came to: answer text, reasoning, calls (ids left out), and whether it stopped. */
const read = (chunks: string[], options: Partial<RecoveryOptions> = {}) => {
  let n = 0;
  const recovery = createRecovery({
    tools: TOOLS,
    protocol: 'native',
    newId: () => `call_${++n}`,
    ...options,
  });
  const events: LlmEvent[] = [];
  for (const chunk of chunks) events.push(...recovery.feed(chunk));
  events.push(...recovery.finish());
  return {
    answer: events.flatMap((e) => (e.type === 'text' ? [e.text] : [])).join(''),
    reasoning: events.flatMap((e) => (e.type === 'reasoning' ? [e.text] : [])).join(''),
    calls: events.flatMap((e) =>
      e.type === 'tool-call' ? [{ name: e.call.name, args: e.call.args }] : [],
    ),
    invalid: events.filter((e) => e.type === 'tool-call-invalid'),
    stopped: recovery.stopped,
  };
};

const CASES = corpus();

describe('the corpus of text tool calls', () => {
  it('covers every family the issue names, negatives and control tokens', () => {
    const families = new Set(CASES.map((c) => c.family));
    for (const family of [
      'niffler',
      'hermes',
      'qwen3-coder',
      'glm',
      'granite',
      'mistral',
      'deepseek',
      'kimi',
      'minimax',
      'harmony',
      'gemma',
      'phi4',
      'command-r',
      'functionary',
      'llama3',
      'pythonic',
      'json',
      'negative',
      'controls',
    ])
      expect(families, family).toContain(family);
    expect(CASES.every((c) => c.source.length > 10)).toBe(true);
  });

  it.each(CASES.map((c) => [c.id, c] as const))(
    '%s: reads its calls, answer and reasoning',
    (_id, c) => {
      const got = read([c.text]);
      expect(got.calls).toEqual(c.calls);
      expect(got.answer).toBe(c.answer);
      expect(got.reasoning).toBe(c.reasoning);
      expect(got.invalid).toEqual([]);
    },
  );

  it.each(CASES.map((c) => [c.id, c] as const))(
    '%s: reads the same split at every point, and a character at a time',
    (_id, c) => {
      const whole = read([c.text]);
      for (let i = 1; i < c.text.length; i++)
        expect(read([c.text.slice(0, i), c.text.slice(i)]), `split at ${i}`).toEqual(whole);
      expect(read([...c.text])).toEqual(whole);
    },
  );

  it.each(CASES.filter((c) => c.calls.length > 0).map((c) => [c.id, c] as const))(
    '%s: never lets call syntax through as text',
    (_id, c) => {
      const { answer } = read([...c.text]);
      for (const marker of [
        '<tool_call',
        'TOOL_CALL',
        '[TOOL_CALLS]',
        '<|',
        '<｜',
        'functools',
        '"arguments"',
        '"parameters"',
        '>>>',
        '```',
      ])
        if (!c.answer.includes(marker)) expect(answer).not.toContain(marker);
    },
  );
});

describe('streaming', () => {
  it('lets text before an opener through at once, and holds back only what may be one', () => {
    let n = 0;
    const recovery = createRecovery({ tools: TOOLS, protocol: 'native', newId: () => `c${++n}` });
    expect(recovery.feed('Let me look at the file <to')).toEqual([
      { type: 'text', text: 'Let me look at the file ' },
    ]);
    // A false start goes out whole, at once.
    expect(recovery.feed('ol> and more')).toEqual([{ type: 'text', text: '<tool> and more' }]);
    expect(recovery.feed('<tool_call>{"name": "read_file", "arguments": {"path": "a"}')).toEqual(
      [],
    );
    expect(recovery.feed('}</tool_call>')).toEqual([
      { type: 'tool-call', call: { id: 'c1', name: 'read_file', args: { path: 'a' } } },
    ]);
    expect(recovery.finish()).toEqual([]);
  });

  it('holds nothing back in plain prose without opener characters', () => {
    const recovery = createRecovery({ tools: TOOLS, protocol: 'native', newId: () => 'x' });
    expect(recovery.feed('plain words, commas; and 42 numbers')).toEqual([
      { type: 'text', text: 'plain words, commas; and 42 numbers' },
    ]);
  });

  it('stops after a call when what follows is not another call (an invented result)', () => {
    const got = read([
      '<tool_call>{"name": "read_file", "arguments": {"path": "a"}}</tool_call>\n<tool_response>\ninvented\n</tool_response>',
    ]);
    expect(got.calls).toHaveLength(1);
    expect(got.answer).toBe('');
    expect(got.stopped).toBe(true);
  });

  it('gives back plain text held at the end when the stream fails, never a call region', () => {
    const recovery = createRecovery({ tools: TOOLS, protocol: 'native', newId: () => 'x' });
    expect(recovery.feed('thinking about it <tool_')).toEqual([
      { type: 'text', text: 'thinking about it ' },
    ]);
    expect(recovery.abandon()).toEqual([{ type: 'text', text: '<tool_' }]);
    const inCall = createRecovery({ tools: TOOLS, protocol: 'native', newId: () => 'x' });
    inCall.feed('<tool_call>{"name": "read_');
    expect(inCall.abandon()).toEqual([]);
  });
});

describe('bad input', () => {
  it('keeps 1 MB of arguments as text, at once past the limit, and ends cleanly', () => {
    const content = 'x'.repeat(MAX_REGION_CHARS + 48_576);
    const text = `<tool_call>\n{"name": "read_file", "arguments": {"path": "${content}"}}\n</tool_call>`;
    const chunks: string[] = [];
    for (let i = 0; i < text.length; i += 4096) chunks.push(text.slice(i, i + 4096));
    const got = read(chunks);
    expect(got.calls).toEqual([]);
    expect(got.answer).toBe(text);
  });

  it('reads a 200 KB call streamed in 7-character chunks', () => {
    const content = 'const a = "}{"; // <tool_call> \\" \n'.repeat(6000);
    const args = JSON.stringify({ path: 'big.ts', content });
    const text = `<tool_call>\n{"name": "read_file", "arguments": ${args}}\n</tool_call>`;
    const chunks: string[] = [];
    for (let i = 0; i < text.length; i += 7) chunks.push(text.slice(i, i + 7));
    expect(read(chunks).calls).toEqual([{ name: 'read_file', args: { path: 'big.ts', content } }]);
  });

  it('turns a Hermes call to a tool not offered, or with arguments that are no object, into text', () => {
    for (const text of [
      '<tool_call>{"name": "rm_rf", "arguments": {}}</tool_call>',
      '<tool_call>{"name": "read_file", "arguments": "README.md"}</tool_call>',
      '<tool_call>{"name": "read_file"}</tool_call>',
    ])
      expect(read([text])).toMatchObject({ calls: [], answer: text });
  });
});

describe('families sharing an opener, and the order', () => {
  it('reads <tool_call> as Hermes JSON, Qwen3-Coder XML, GLM pairs or a Granite array', () => {
    expect(
      read(['<tool_call>{"name": "get_time", "arguments": {"city": "A"}}</tool_call>']).calls,
    ).toEqual([{ name: 'get_time', args: { city: 'A' } }]);
    expect(
      read(['<tool_call><function=get_time><parameter=city>A</parameter></function></tool_call>'])
        .calls,
    ).toEqual([{ name: 'get_time', args: { city: 'A' } }]);
    expect(
      read(['<tool_call>get_time<arg_key>city</arg_key><arg_value>A</arg_value></tool_call>'])
        .calls,
    ).toEqual([{ name: 'get_time', args: { city: 'A' } }]);
    expect(read(['<tool_call> [{"name": "get_time", "arguments": {"city": "A"}}]']).calls).toEqual([
      { name: 'get_time', args: { city: 'A' } },
    ]);
  });

  it('types XML values by the tool schema', () => {
    const text =
      '<tool_call>\n<function=register_user>\n<parameter=name>\n42\n</parameter>\n<parameter=age>\n42\n</parameter>\n<parameter=passed_test>\ntrue\n</parameter>\n<parameter=aliases>\n["a"]\n</parameter>\n<parameter=address>\n{"city": "LA"}\n</parameter>\n</function>\n</tool_call>';
    expect(read([text]).calls).toEqual([
      {
        name: 'register_user',
        args: { name: '42', age: 42, passed_test: true, aliases: ['a'], address: { city: 'LA' } },
      },
    ]);
  });

  it('reads only the family a model entry names, and nothing under `none`', () => {
    const hermes = '<tool_call>{"name": "get_time", "arguments": {}}</tool_call>';
    const mistral = '[TOOL_CALLS]get_time[ARGS]{}';
    const only = (format: ToolCallFormat, text: string) => read([text], { format }).calls.length;
    expect(only('hermes', hermes)).toBe(1);
    expect(only('hermes', mistral)).toBe(0);
    expect(only('mistral', mistral)).toBe(1);
    expect(only('none', hermes)).toBe(0);
    expect(read([hermes], { format: 'none' }).answer).toBe(hermes);
  });

  it('takes the first family read for the whole message', () => {
    const got = read([
      '[TOOL_CALLS]get_time[ARGS]{}<tool_call>{"name": "read_file", "arguments": {"path": "a"}}</tool_call>',
    ]);
    expect(got.calls).toEqual([{ name: 'get_time', args: {} }]);
    expect(got.stopped).toBe(true);
  });
});

describe('openers prose also uses', () => {
  it('reads a bare JSON call only at the start of a line, and only when the message ends with it', () => {
    const call = '{"name": "get_time", "parameters": {"city": "A"}}';
    expect(read([`Sure:\n${call}`]).calls).toHaveLength(1);
    expect(read([`Sure: ${call}`]).calls).toHaveLength(0);
    expect(read([`${call}\nThat is the JSON for it.`])).toMatchObject({
      calls: [],
      answer: `${call}\nThat is the JSON for it.`,
    });
  });

  it('reads a Python-style list only for an offered tool', () => {
    expect(read(["[get_time(city='A')]"]).calls).toEqual([
      { name: 'get_time', args: { city: 'A' } },
    ]);
    expect(read(["[print_it(city='A')]"]).calls).toEqual([]);
    expect(read(['[a link](https://example.com) [1] [get_'])).toMatchObject({
      calls: [],
      answer: '[a link](https://example.com) [1] [get_',
    });
  });

  it('streams a code block the moment its language says it is code', () => {
    const recovery = createRecovery({ tools: TOOLS, protocol: 'native', newId: () => 'x' });
    expect(recovery.feed('Here:\n```python\nread_file(path="a")\n')).toEqual([
      { type: 'text', text: 'Here:\n```python\nread_file(path="a")\n' },
    ]);
    expect(recovery.feed('```\n{"name": "get_time", "parameters": {}}')).toEqual([
      { type: 'text', text: '```\n' },
    ]);
  });
});

describe('the reasoning channel', () => {
  const reasoningRecovery = () =>
    createRecovery({ tools: TOOLS, protocol: 'native', newId: () => 'r1', channel: 'reasoning' });

  it('reads a call the server filed as reasoning, when the reply ends with it', () => {
    const recovery = reasoningRecovery();
    const events = [
      ...recovery.feed(
        'Let me check.\n<tool_call>{"name": "get_time", "arguments": {}}</tool_call>',
      ),
      ...recovery.finish(true),
    ];
    expect(events).toEqual([
      { type: 'reasoning', text: 'Let me check.\n' },
      { type: 'tool-call', call: { id: 'r1', name: 'get_time', args: {} } },
    ]);
  });

  it('keeps a call in the reasoning as reasoning when an answer follows', () => {
    const recovery = reasoningRecovery();
    const text = 'I could call <tool_call>{"name": "get_time", "arguments": {}}</tool_call>';
    const events = [...recovery.feed(text), ...recovery.finish(false)];
    expect(events.every((e) => e.type === 'reasoning')).toBe(true);
    expect(events.map((e) => (e.type === 'reasoning' ? e.text : '')).join('')).toBe(text);
  });
});

describe('the text protocol', () => {
  it('reports a TOOL_CALL to a tool not offered, so the model can correct it', () => {
    const got = read(['TOOL_CALL: {"name": "rm_rf", "args": {}}'], { protocol: 'text' });
    expect(got.calls).toEqual([]);
    expect(got.invalid).toMatchObject([
      { name: 'rm_rf', message: expect.stringContaining('no tool named "rm_rf" is offered') },
    ]);
  });

  it("also reads a taught model's native syntax", () => {
    expect(
      read(['<tool_call>{"name": "get_time", "arguments": {}}</tool_call>'], { protocol: 'text' })
        .calls,
    ).toHaveLength(1);
  });

  it('reads a fenced TOOL_CALL as certain when taught (what follows stops the stream)', () => {
    const got = read(['```\nTOOL_CALL: {"name": "get_time", "args": {}}\n```\nTOOL_RESULT: {}'], {
      protocol: 'text',
    });
    expect(got).toMatchObject({ calls: [{ name: 'get_time' }], answer: '', stopped: true });
  });
});

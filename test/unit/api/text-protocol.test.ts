import { describe, expect, it } from 'vitest';
import type { LlmEvent, ToolSpec } from '../../../src/workers/protocol/api.ts';
import { createRecovery } from '../../../src/workers/api/recovery/index.ts';
import {
  formatToolCall,
  formatToolResult,
  textProtocolAppendix,
} from '../../../src/workers/api/text-protocol.ts';

type TextProtocolEvent = LlmEvent;

const TOOLS: ToolSpec[] = ['a', 'b', 'list', 'read_file', 'write_file'].map((name) => ({
  name,
  description: '',
  inputSchema: { type: 'object' },
}));

/** The recovery as the text protocol runs it: the model was taught `TOOL_CALL:`. */
const createTextProtocolParser = (newId: () => string) => {
  const recovery = createRecovery({ tools: TOOLS, protocol: 'text', newId });
  return {
    push: (chunk: string) => recovery.feed(chunk),
    end: () => recovery.finish(),
    get isStopped() {
      return recovery.stopped;
    },
    get callCount() {
      return recovery.calls;
    },
  };
};

const counterIds = () => {
  let n = 0;
  return () => `call_${++n}`;
};

/** Runs chunks through a fresh parser; merges adjacent text so any split compares equal. */
const parse = (chunks: string[]) => {
  const parser = createTextProtocolParser(counterIds());
  const events: TextProtocolEvent[] = [];
  let stoppedAt = -1;
  chunks.forEach((chunk, index) => {
    events.push(...parser.push(chunk));
    if (parser.isStopped && stoppedAt < 0) stoppedAt = index;
  });
  events.push(...parser.end());
  const merged: TextProtocolEvent[] = [];
  for (const event of events) {
    const last = merged.at(-1);
    if (event.type === 'text' && last?.type === 'text') last.text += event.text;
    else merged.push(event.type === 'text' ? { ...event } : event);
  }
  return { events: merged, isStopped: parser.isStopped };
};

const splitAt = (text: string, i: number) => [text.slice(0, i), text.slice(i)];

const TRANSCRIPTS: Record<string, string> = {
  plain: 'Hello there — no tools here. `code` and ```fences``` stay.\n',
  fenced:
    'Let me look, ünïcode ✓.\n```json\nTOOL_CALL: {"name": "read_file", "args": {"path": "a.ts"}}\n```\nTOOL_RESULT: {"invented": true}',
  inline: 'Sure. TOOL_CALL:{"name":"list","args":{"dir":"src","deep":{"x":"}{"}}}\n',
  several:
    'Two calls:\nTOOL_CALL: {"name": "a", "args": {"q": "x\\"y"}}\n  TOOL_CALL: {"name": "b", "args": {}}\n\nDone?',
  malformed: 'Oops\nTOOL_CALL: {"name": "a", "args": {"q": }}\nmore text',
  notJson: 'TOOL_CALL: read_file a.ts\nand then',
  truncated: 'TOOL_CALL: {"name": "a", "args": {"q": "never closed"',
};

describe('text protocol parser', () => {
  it.each(Object.entries(TRANSCRIPTS))(
    '%s: gives the same events split at every position',
    (_name, transcript) => {
      const whole = parse([transcript]);
      for (let i = 0; i <= transcript.length; i++)
        expect(parse(splitAt(transcript, i)), `split at ${i}`).toEqual(whole);
      expect(parse([...transcript])).toEqual(whole);
    },
  );

  it.each(Object.entries(TRANSCRIPTS))(
    '%s: gives the same events for UTF-8 bytes split at every byte, decoded as a stream',
    (_name, transcript) => {
      const whole = parse([transcript]);
      const bytes = new TextEncoder().encode(transcript);
      for (let i = 0; i <= bytes.length; i++) {
        const decoder = new TextDecoder();
        const chunks = [
          decoder.decode(bytes.slice(0, i), { stream: true }),
          decoder.decode(bytes.slice(i)),
        ];
        expect(parse(chunks), `byte ${i}`).toEqual(whole);
      }
    },
  );

  it('strips the fence and stops at an invented result', () => {
    const { events, isStopped } = parse([TRANSCRIPTS['fenced']!]);
    expect(events).toEqual([
      { type: 'text', text: 'Let me look, ünïcode ✓.\n' },
      { type: 'tool-call', call: { id: 'call_1', name: 'read_file', args: { path: 'a.ts' } } },
    ]);
    expect(isStopped).toBe(true);
  });

  it('reads text around a call on the same line and braces inside strings', () => {
    expect(parse([TRANSCRIPTS['inline']!]).events).toEqual([
      { type: 'text', text: 'Sure. ' },
      {
        type: 'tool-call',
        call: { id: 'call_1', name: 'list', args: { dir: 'src', deep: { x: '}{' } } },
      },
    ]);
  });

  it('reads several calls in a row, then stops', () => {
    const { events, isStopped } = parse([TRANSCRIPTS['several']!]);
    expect(events.map((e) => (e.type === 'tool-call' ? e.call : e.type))).toEqual([
      'text',
      { id: 'call_1', name: 'a', args: { q: 'x"y' } },
      { id: 'call_2', name: 'b', args: {} },
    ]);
    expect(isStopped).toBe(true);
  });

  it.each([
    ['malformed', 'is not valid JSON'],
    ['notJson', 'expected a JSON object after TOOL_CALL:, found "read_file a.ts"'],
    ['truncated', 'is incomplete'],
  ])('%s: reports an error the model can read', (name, message) => {
    const { events } = parse([TRANSCRIPTS[name]!]);
    const invalid = events.find((e) => e.type === 'tool-call-invalid');
    expect(invalid).toMatchObject({ type: 'tool-call-invalid', id: 'call_1' });
    expect(invalid?.type === 'tool-call-invalid' && invalid.message).toContain(message);
    expect(invalid?.type === 'tool-call-invalid' && invalid.message).toContain(
      'TOOL_CALL: {"name"',
    );
  });

  it('accepts "arguments" for "args" and rejects a call without a name', () => {
    expect(parse(['TOOL_CALL: {"name": "a", "arguments": {"x": 1}}']).events).toEqual([
      { type: 'tool-call', call: { id: 'call_1', name: 'a', args: { x: 1 } } },
    ]);
    expect(parse(['TOOL_CALL: {"args": {}}']).events[0]).toMatchObject({
      type: 'tool-call-invalid',
      name: '',
    });
    expect(parse(['TOOL_CALL: {"name": "a", "args": [1]}']).events[0]).toMatchObject({
      type: 'tool-call-invalid',
      name: 'a',
    });
  });

  it('reads a ~200 KB call streamed in 4-character chunks, then a second call', () => {
    // Braces, quotes and backslashes inside the string land on every side of a chunk boundary.
    const line = 'const o = {"a": "b\\\\", c: \'}\'}; // { \\" } \u00e9 ✓\n';
    const content = line.repeat(Math.ceil(200_000 / line.length));
    const first = formatToolCall({ name: 'write_file', args: { path: 'big.ts', content } });
    const second = formatToolCall({ name: 'read_file', args: { path: 'big.ts' } });
    const transcript = `Writing it.\n${first}\n${second}\n`;
    expect(first.length).toBeGreaterThan(200_000);
    const chunks: string[] = [];
    for (let i = 0; i < transcript.length; i += 4) chunks.push(transcript.slice(i, i + 4));

    const parser = createTextProtocolParser(counterIds());
    const seen: { chunk: number; event: TextProtocolEvent }[] = [];
    chunks.forEach((chunk, index) => {
      for (const event of parser.push(chunk)) seen.push({ chunk: index, event });
    });
    for (const event of parser.end()) seen.push({ chunk: chunks.length, event });

    const calls = seen.filter(({ event }) => event.type === 'tool-call');
    expect(calls.map(({ event }) => event)).toEqual([
      {
        type: 'tool-call',
        call: { id: 'call_1', name: 'write_file', args: { path: 'big.ts', content } },
      },
      { type: 'tool-call', call: { id: 'call_2', name: 'read_file', args: { path: 'big.ts' } } },
    ]);
    // Each call comes out with the chunk holding its closing brace, not earlier nor later.
    const closing = (end: number) => Math.floor((end - 1) / 4);
    const firstEnd = transcript.indexOf(first) + first.length;
    const secondEnd = transcript.indexOf(second) + second.length;
    expect(calls.map(({ chunk }) => chunk)).toEqual([closing(firstEnd), closing(secondEnd)]);
    const text = seen.map(({ event }) => (event.type === 'text' ? event.text : '')).join('');
    expect(text).toBe('Writing it.\n');
    expect(seen.every(({ event }) => event.type !== 'tool-call-invalid')).toBe(true);
    expect(parser.callCount).toBe(2);
  });

  it('formats calls, results and the appendix', () => {
    expect(formatToolCall({ name: 'a', args: { x: 1 } })).toBe(
      'TOOL_CALL: {"name":"a","args":{"x":1}}',
    );
    expect(formatToolResult('a', 'ok')).toBe('TOOL_RESULT: {"name":"a","result":"ok"}');
    const appendix = textProtocolAppendix([
      { name: 'read_file', description: 'Reads a file.', inputSchema: { type: 'object' } },
    ]);
    expect(appendix).toContain('TOOL_CALL: {"name": "<tool name>", "args": {<arguments as JSON>}}');
    expect(appendix).toContain(
      '## read_file\nReads a file.\nArguments (JSON schema): {"type":"object"}',
    );
  });
});

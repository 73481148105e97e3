import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { NOT_RUN, pairToolResults } from '../../src/main/engine/tool-pairs.ts';
import { listSessions, readTranscript, Transcript } from '../../src/main/engine/transcript.ts';
import type { ChatMessage } from '../../src/workers/protocol/api.ts';
import type { TurnSummary } from '../../src/main/protocol.ts';
import { exitCodeForOutcome } from '../../src/ui/render/turn.ts';

const tempDir = () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nf-tr-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

describe('transcripts', () => {
  it('append entries, list sessions with their title, and read them back', async () => {
    const dir = tempDir();
    const transcript = Transcript.open(dir, 's1');
    transcript.append({
      type: 'session',
      id: 's1',
      root: '/r',
      createdAt: '2026-01-01T00:00:00Z',
      version: '0',
    });
    transcript.append({
      type: 'message',
      time: 't',
      turn: 1,
      message: { role: 'user', content: 'what is in   src/?' },
    });
    transcript.append({
      type: 'message',
      time: 't',
      turn: 1,
      message: { role: 'assistant', content: 'code' },
    });
    await transcript.close();
    expect(readTranscript(dir, 's1').messages).toEqual([
      { role: 'user', content: 'what is in   src/?' },
      { role: 'assistant', content: 'code' },
    ]);
    expect(listSessions(dir)).toMatchObject([{ id: 's1', title: 'what is in src/?', messages: 2 }]);
  });

  it('skips a torn last line (a killed process) with a warning, keeping everything before it', async () => {
    const dir = tempDir();
    const transcript = Transcript.open(dir, 's2');
    transcript.append({
      type: 'message',
      time: 't',
      turn: 1,
      message: { role: 'user', content: 'kept' },
    });
    await transcript.close();
    appendFileSync(path.join(dir, 's2.jsonl'), '{"type":"message","time":"t","turn":1,"mess');
    const loaded = readTranscript(dir, 's2');
    expect(loaded.messages).toEqual([{ role: 'user', content: 'kept' }]);
    expect(loaded.warnings).toEqual([
      `${path.join(dir, 's2.jsonl')}:2: the last line is incomplete (written when the process was killed); skipped, and cut off when the session goes on`,
    ]);
  });

  it.each(['../other/s1', '..', '.hidden', 'a/b', '/etc/passwd', 'x'.repeat(129), ''])(
    'refuses %j as a session id, reading and writing nothing outside',
    (id) => {
      const base = tempDir();
      const dir = path.join(base, 'sessions', 'ws');
      mkdirSync(path.join(base, 'sessions', 'other'), { recursive: true });
      writeFileSync(path.join(base, 'sessions', 'other', 's1.jsonl'), '{"type":"start"}\n');
      expect(() => readTranscript(dir, id)).toThrow(/is not a session id: ids are letters, digits/);
      expect(() => Transcript.open(dir, id)).toThrow(/is not a session id/);
      expect(readdirSync(path.join(base, 'sessions')).sort()).toEqual(['other']);
    },
  );

  it('cuts a torn last line off when the session goes on, so the next entry is not lost with it', async () => {
    const dir = tempDir();
    appendFileSync(
      path.join(dir, 's3.jsonl'),
      '{"type":"message","time":"t","turn":1,"message":{"role":"user","content":"kept"}}\n{"type":"mess',
    );
    const transcript = Transcript.open(dir, 's3');
    transcript.append({
      type: 'message',
      time: 't',
      turn: 2,
      message: { role: 'user', content: 'after the crash' },
    });
    await transcript.close();
    const loaded = readTranscript(dir, 's3');
    expect(loaded.warnings).toEqual([]);
    expect(loaded.messages.map((m) => ('content' in m ? m.content : null))).toEqual([
      'kept',
      'after the crash',
    ]);
  });

  it('cannot open its file: the session goes on, and each flush names the file and the errno', async () => {
    const dir = tempDir();
    // A file where the sessions directory should be: ENOTDIR, as a read-only disk gives EROFS.
    appendFileSync(path.join(dir, 'sessions'), '');
    const transcript = Transcript.open(path.join(dir, 'sessions', 'key'), 's4');
    transcript.append({ type: 'turn-start', time: 't', turn: 1, model: 'm' });
    await expect(transcript.flushed()).rejects.toThrow(
      `could not write the transcript ${path.join(dir, 'sessions', 'key', 's4.jsonl')}: a part of the path is not a directory (ENOTDIR); the session goes on`,
    );
    await transcript.close();
  });

  it('names the next step for an unknown session', () => {
    expect(() => readTranscript(tempDir(), 'nope')).toThrow(
      'no session "nope" in this workspace; list them with niffler sessions',
    );
  });
});

describe('tool calls paired with their results (what the providers require)', () => {
  const call = (id: string, name = 'read_file') => ({ id, name, args: {} });
  const assistant = (...ids: string[]): ChatMessage => ({
    role: 'assistant',
    content: '',
    toolCalls: ids.map((id) => call(id)),
  });
  const result = (id: string): ChatMessage => ({
    role: 'tool',
    toolCallId: id,
    name: 'read_file',
    result: { ok: true, output: id },
  });
  const user = (text: string): ChatMessage => ({ role: 'user', content: text });
  const notRun = (id: string): ChatMessage => ({
    role: 'tool',
    toolCallId: id,
    name: 'read_file',
    result: { ok: false, error: { code: 'canceled', message: NOT_RUN } },
  });

  it.each([
    [
      'a complete history is left as it is',
      [user('q'), assistant('a'), result('a'), user('r')],
      [user('q'), assistant('a'), result('a'), user('r')],
      0,
      0,
    ],
    [
      'an unanswered call at the end gets a result',
      [user('q'), assistant('a', 'b'), result('b')],
      [user('q'), assistant('a', 'b'), notRun('a'), result('b')],
      1,
      0,
    ],
    [
      'a result written after a later message goes back to its call',
      [assistant('a'), user('r'), result('a')],
      [assistant('a'), result('a'), user('r')],
      0,
      0,
    ],
    [
      'an unanswered call before a later prompt is answered in place',
      [assistant('a'), user('r')],
      [assistant('a'), notRun('a'), user('r')],
      1,
      0,
    ],
    [
      'a result without a call is left out',
      [user('q'), result('x'), user('r')],
      [user('q'), user('r')],
      0,
      1,
    ],
    [
      'ids reused by later turns pair with the latest call',
      [assistant('c1'), result('c1'), assistant('c1'), result('c1')],
      [assistant('c1'), result('c1'), assistant('c1'), result('c1')],
      0,
      0,
    ],
  ] as const)('%s', (_name, input, output, added, dropped) => {
    const paired = pairToolResults(input);
    expect(paired.messages).toEqual(output);
    expect(paired.added).toHaveLength(added);
    expect(paired.dropped).toBe(dropped);
  });
});

describe('one-shot exit codes', () => {
  const summary = (outcome: TurnSummary['outcome']): TurnSummary => ({
    outcome,
    text: '',
    usage: { inputTokens: 0, outputTokens: 0 },
    steps: 0,
    denied: [],
  });
  it.each([
    ['answered', 0],
    ['error', 1],
    ['max-steps', 3],
    ['cancelled', 130],
  ] as const)('%s → %i', (outcome, code) =>
    expect(exitCodeForOutcome(summary(outcome))).toBe(code),
  );
});

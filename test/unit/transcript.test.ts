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
import { listSessions, readTranscript, Transcript } from '../../src/main/engine/transcript.ts';
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
      `${path.join(dir, 's2.jsonl')}:2: the last line is incomplete (written when the process was killed); skipped`,
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

  it('names the next step for an unknown session', () => {
    expect(() => readTranscript(tempDir(), 'nope')).toThrow(
      'no session "nope" in this workspace; list them with niffler sessions',
    );
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

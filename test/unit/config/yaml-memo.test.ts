import { chmodSync, cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { parseConfigText } from '../../../src/main/config/source.ts';

// A config text parsed once is taken from the memo of its data afterwards (yaml-memo.ts): these
// tests look at what a later process (a fresh home's memo, as a new process would read it) gets.

const TEXT = [
  'model: local',
  'mcpServers:',
  '  files:',
  '    command: npx',
  '    args: [-y, server-filesystem, .]',
  '  memory: { command: node, args: [m.js], env: { A: "1" } }',
  '',
].join('\n');

const home = (): string => {
  const dir = mkdtempSync(path.join(tmpdir(), 'niffler-yaml-memo-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

const memoFile = (dir: string) => path.join(dir, 'cache', 'yaml.json');

/** A copy of `from`'s memo in a new home, edited by `edit`: what the next process reads. */
const nextProcess = (
  from: string,
  edit?: (memo: { parser: string; entries: [string, string][] }) => void,
) => {
  const dir = home();
  cpSync(path.join(from, 'cache'), path.join(dir, 'cache'), { recursive: true });
  if (edit) {
    const memo = JSON.parse(readFileSync(memoFile(dir), 'utf8'));
    edit(memo);
    writeFileSync(memoFile(dir), JSON.stringify(memo), { mode: 0o600 });
  }
  return dir;
};

const parse = (text: string, dir: string) =>
  parseConfigText(text, '/repo/.niffler/config.yaml', { kind: 'repo' }, { NIFFLER_HOME: dir });

describe('the memo of config texts parsed before', () => {
  it('gives the same data and lines as a parse, from the memo a later process reads', () => {
    const first = home();
    const parsed = parse(TEXT, first);
    const later = nextProcess(first, (memo) => {
      // Marked, to see where the data comes from.
      memo.entries = memo.entries.map(([text, kept]) => {
        const { data, lines } = JSON.parse(kept);
        return [text, JSON.stringify({ data: { ...data, seen: 'memo' }, lines })];
      });
    });
    const kept = parse(TEXT, later);
    expect(kept.data).toEqual({ ...parsed.data, seen: 'memo' });
    // Lines of keys come from the memo too; of a key not there, from parsing the text when asked
    // for (the nearest key's): the same as the parse's.
    for (const key of [
      ['mcpServers', 'files', 'args'],
      ['mcpServers', 'files', 'args', 1],
      ['mcpServers', 'memory', 'env', 'A'],
      ['mcpServers', 'memory'],
      ['model'],
      ['mcpServers', 'files', 'nope'],
      ['nope'],
    ])
      expect(kept.lineOf(key), key.join('.')).toBe(parsed.lineOf(key));
    expect(kept.lineOf(['mcpServers', 'files', 'args'])).toBe(5);
    expect(kept.lineOf(['mcpServers', 'files', 'nope'])).toBe(3);
  });

  it('keeps the lines of the keys, so that a listing of where each is defined needs no parse', () => {
    const first = home();
    parse(TEXT, first);
    const later = nextProcess(first, (memo) => {
      memo.entries = memo.entries.map(([text, kept]) => {
        const { data, lines } = JSON.parse(kept);
        // Marked, to see that they come from the memo.
        for (const id of Object.keys(lines)) lines[id] += 100;
        return [text, JSON.stringify({ data, lines })];
      });
    });
    const kept = parse(TEXT, later);
    expect(kept.lineOf(['mcpServers', 'files'])).toBe(103);
    expect(kept.lineOf(['mcpServers', 'memory', 'env', 'A'])).toBe(106);
    // Not a key of the text: its nearest key's line, from a parse.
    expect(kept.lineOf(['mcpServers', 'memory', 'cwd'])).toBe(6);
  });

  it('gives a copy: what a caller changes is not what the next parse gets', () => {
    const dir = home();
    parse(TEXT, dir);
    const one = parse(TEXT, dir);
    (one.data['mcpServers'] as Record<string, unknown>)['files'] = 'changed';
    expect((parse(TEXT, dir).data['mcpServers'] as Record<string, unknown>)['files']).toEqual({
      command: 'npx',
      args: ['-y', 'server-filesystem', '.'],
    });
  });

  it('never keeps a text that fails: its error is the parser own, every time', () => {
    const dir = home();
    const bad = 'a: 1\na: 2\n';
    expect(() => parse(bad, dir)).toThrow(/config\.yaml:2: duplicate key/);
    expect(() => parse(bad, dir)).toThrow(/config\.yaml:2: duplicate key/);
    expect(() => readFileSync(memoFile(dir))).toThrow(/ENOENT/);
  });

  it('is not read when others may write it, when another parser wrote it, or when it is cut short', () => {
    const first = home();
    const parsed = parse(TEXT, first);
    const marked = (memo: { entries: [string, string][] }) => {
      memo.entries = memo.entries.map(([text]) => [
        text,
        JSON.stringify({ data: { seen: 'memo' }, lines: {} }),
      ]);
    };

    const writable = nextProcess(first, marked);
    chmodSync(memoFile(writable), 0o666);
    expect(parse(TEXT, writable).data).toEqual(parsed.data);

    const other = nextProcess(first, (memo) => {
      marked(memo);
      memo.parser = 'niffler 0.0.1 yaml 1.0.0';
    });
    expect(parse(TEXT, other).data).toEqual(parsed.data);

    const cut = nextProcess(first);
    writeFileSync(memoFile(cut), readFileSync(memoFile(cut), 'utf8').slice(0, 20), { mode: 0o600 });
    expect(parse(TEXT, cut).data).toEqual(parsed.data);
    // Written again whole by that parse.
    expect(JSON.parse(readFileSync(memoFile(cut), 'utf8')).entries).toHaveLength(1);
  });
});

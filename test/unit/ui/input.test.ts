import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  completeSlash,
  completeSlashArgs,
  helpText,
  parseSlash,
} from '../../../src/ui/app/commands.ts';
import * as ed from '../../../src/ui/app/editor.ts';
import { buildAnswer, cycleValue, fieldsFromSchema } from '../../../src/ui/app/elicitation.ts';
import { attachFiles, completePath } from '../../../src/ui/app/files.ts';
import { appendHistory, historyFile, loadHistory } from '../../../src/ui/app/input-history.ts';
import { suggestionsFor } from '../../../src/ui/app/hooks/use-keybindings.ts';

const tempDir = () => {
  const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'nf-ui-')));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

describe('editor', () => {
  const at = (text: string, cursor = text.length): ed.EditorState => ({ text, cursor });
  it.each<[string, (s: ed.EditorState) => ed.EditorState, ed.EditorState, ed.EditorState]>([
    ['insert in the middle', (s) => ed.insert(s, 'X'), at('ab', 1), at('aXb', 2)],
    ['backspace', ed.backspace, at('ab', 1), at('b', 0)],
    ['backspace at the start', ed.backspace, at('ab', 0), at('ab', 0)],
    ['delete forward', ed.deleteForward, at('ab', 0), at('b', 0)],
    ['home of the second line', ed.home, at('ab\ncd', 4), at('ab\ncd', 3)],
    ['end of the first line', ed.end, at('ab\ncd', 0), at('ab\ncd', 2)],
    ['line up keeps the column', (s) => ed.moveLine(s, -1), at('abc\nde', 5), at('abc\nde', 1)],
    ['line down clamps the column', (s) => ed.moveLine(s, 1), at('abc\nd', 3), at('abc\nd', 5)],
    ['kill to the line start', ed.killToStart, at('ab\ncd', 5), at('ab\n', 3)],
    ['kill a word', ed.killWord, at('one two '), at('one ', 4)],
    ['replace the @token', (s) => ed.replaceToken(s, '@src/'), at('see @sr'), at('see @src/', 9)],
  ])('%s', (_name, fn, from, to) => {
    expect(fn(from)).toEqual(to);
  });

  it('knows the first and last line', () => {
    expect(ed.isOnFirstLine(at('a\nb', 1))).toBe(true);
    expect(ed.isOnFirstLine(at('a\nb', 2))).toBe(false);
    expect(ed.isOnLastLine(at('a\nb', 1))).toBe(false);
    expect(ed.isOnLastLine(at('a\nb', 3))).toBe(true);
  });
});

describe('slash commands', () => {
  it.each([
    ['/mcp restart everything', { name: 'mcp', args: ['restart', 'everything'] }],
    ['  /HELP ', { name: 'help', args: [] }],
    ['hello', null],
    ['//not a command', null],
  ])('%s', (text, parsed) => {
    expect(parseSlash(text)).toEqual(parsed);
  });

  it('completes skill names after /skills, those that can be activated only', () => {
    const info = (name: string, trust: 'yours' | 'trusted' | 'untrusted', description = 'd') => ({
      name,
      description,
      source: trust === 'yours' ? ('user' as const) : ('repo' as const),
      location: '.agents/skills',
      file: `/x/${name}/SKILL.md`,
      trust,
      offered: trust !== 'untrusted',
      problems: [],
    });
    const skills = [
      info('pdf', 'yours'),
      info('pptx', 'trusted'),
      info('plan-it', 'untrusted'),
      info('pbad', 'yours', ''),
    ];
    expect(completeSlashArgs('/skills p', { skills })).toEqual(['/skills pdf', '/skills pptx']);
    expect(completeSlashArgs('/skills pdf', { skills })).toEqual([]);
    expect(completeSlashArgs('/skill p', { skills })).toEqual([]);
  });

  it('completes names and lists every command in /help', () => {
    expect(completeSlash('/m')).toEqual(['/mcp', '/model']);
    expect(completeSlash('/x')).toEqual([]);
    for (const name of [
      'help',
      'mcp',
      'tools',
      'model',
      'clear',
      'sessions',
      'resume',
      'cost',
      'config',
      'exit',
    ])
      expect(helpText()).toContain(`/${name}`);
  });

  it('suggests commands at the start, paths after @', () => {
    const root = tempDir();
    writeFileSync(path.join(root, 'readme.md'), '');
    expect(suggestionsFor({ text: '/he', cursor: 3 }, root)).toEqual(['/help']);
    expect(suggestionsFor({ text: '/help', cursor: 5 }, root)).toEqual([]);
    expect(suggestionsFor({ text: 'see @re', cursor: 7 }, root)).toEqual(['@readme.md']);
    expect(suggestionsFor({ text: 'plain', cursor: 5 }, root)).toEqual([]);
  });
});

describe('files', () => {
  it('completes paths: directories first, hidden files only when asked, never .git', () => {
    const root = tempDir();
    mkdirSync(path.join(root, 'src', 'app'), { recursive: true });
    mkdirSync(path.join(root, '.git'));
    for (const file of ['src/a.ts', 'src/b.ts', '.env', 'setup.py'])
      writeFileSync(path.join(root, file), 'x');
    expect(completePath(root, '@s')).toEqual(['@src/', '@setup.py']);
    expect(completePath(root, '@src/')).toEqual(['@src/app/', '@src/a.ts', '@src/b.ts']);
    expect(completePath(root, '@.')).toEqual(['@.env']);
    expect(completePath(root, '@../')).toEqual([]);
  });

  it('attaches @files inside the workspace and leaves other @words alone', () => {
    const root = tempDir();
    writeFileSync(path.join(root, 'a.txt'), 'alpha');
    const result = attachFiles(root, 'look at @a.txt and @nobody');
    expect(result.attachments).toEqual(['a.txt']);
    expect(result.prompt).toBe('look at @a.txt and @nobody\n\n<file path="a.txt">\nalpha\n</file>');
    expect(attachFiles(root, 'mail @../etc').problems).toEqual([]);
  });

  it('keeps input history per workspace under NIFFLER_HOME', () => {
    const home = tempDir();
    const file = historyFile('/some/repo', { NIFFLER_HOME: home });
    expect(file.startsWith(path.join(home, 'history'))).toBe(true);
    let items = loadHistory(file);
    items = appendHistory(file, items, 'first');
    items = appendHistory(file, items, 'first');
    items = appendHistory(file, items, 'two\nlines');
    expect(items).toEqual(['first', 'two\nlines']);
    writeFileSync(file, readFileSync(file, 'utf8') + '{"torn');
    expect(loadHistory(file)).toEqual(['first', 'two\nlines']);
    expect(historyFile('/other/repo', { NIFFLER_HOME: home })).not.toBe(file);
  });
});

describe('elicitation forms', () => {
  const schema = {
    type: 'object',
    properties: {
      name: { type: 'string', title: 'Name', default: 'Ada' },
      age: { type: 'integer' },
      subscribe: { type: 'boolean', default: true },
      color: { type: 'string', enum: ['red', 'green'] },
      tags: { type: 'array', items: { type: 'string', enum: ['a', 'b'] } },
    },
    required: ['name', 'age'],
  };

  it('builds fields with defaults filled', () => {
    expect(
      fieldsFromSchema(schema).map((f) => [f.name, f.label, f.type, f.required, f.value]),
    ).toEqual([
      ['name', 'Name', 'string', true, 'Ada'],
      ['age', 'age', 'integer', true, ''],
      ['subscribe', 'subscribe', 'boolean', false, 'true'],
      ['color', 'color', 'enum', false, 'red'],
      ['tags', 'tags', 'list', false, ''],
    ]);
  });

  it.each([
    ['a missing required field', { age: '' }, { ok: false, error: 'age is required' }],
    ['a bad integer', { age: '4.5' }, { ok: false, error: 'age: expected an integer, got "4.5"' }],
    [
      'good values',
      { age: '36', tags: 'a, b' },
      {
        ok: true,
        answer: {
          action: 'accept',
          content: { name: 'Ada', age: 36, subscribe: true, color: 'red', tags: ['a', 'b'] },
        },
      },
    ],
  ])('answers: %s', (_name, values: Record<string, string>, expected) => {
    const fields = fieldsFromSchema(schema).map((f) =>
      f.name in values ? { ...f, value: values[f.name]! } : f,
    );
    expect(buildAnswer(fields)).toEqual(expected);
  });

  it('cycles enums and flips booleans', () => {
    const [, , subscribe, color] = fieldsFromSchema(schema);
    expect(cycleValue(color!, 1)).toBe('green');
    expect(cycleValue(color!, -1)).toBe('green');
    expect(cycleValue(subscribe!, 1)).toBe('false');
  });
});

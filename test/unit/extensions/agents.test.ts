import { describe, expect, it } from 'vitest';
import { parseAgent } from '../../../src/main/extensions/agents.ts';
import { parseMarkdown } from '../../../src/main/extensions/parse.ts';
import { agentTools } from '../../../src/main/extensions/turn.ts';
import type { ToolEntry, ToolTable } from '../../../src/main/engine/tool-calls.ts';

const file = (text: string, name = 'x') => ({
  file: `/r/${name}.md`,
  shown: `${name}.md`,
  name,
  text,
});

const table = (...names: string[]): ToolTable =>
  new Map(
    names.map((name): [string, ToolEntry] => [
      name,
      {
        spec: { name, description: '', inputSchema: {} },
        kind: name.includes('__') ? 'mcp' : 'builtin',
        readOnly: false,
        destructive: false,
        ...(name.includes('__') ? { server: name.split('__')[0]! } : {}),
      },
    ]),
  );

describe('frontmatter', () => {
  it.each([
    ['no frontmatter: all body', 'just text\n', { ok: true }],
    [
      'unclosed',
      '---\na: 1\n',
      {
        ok: false,
        problem: 'x.md:1: the frontmatter opened with --- is never closed by a --- line',
      },
    ],
    ['bad YAML names its line in the file', '---\na: 1\nb: [\n---\n', { ok: false }],
    [
      'a list is not a mapping',
      '---\n- a\n---\n',
      { ok: false, problem: 'x.md:2: expected a mapping of keys, got a list' },
    ],
  ])('%s', (_name, text, expected) => {
    expect(parseMarkdown(text, 'x.md')).toMatchObject(expected);
  });

  it('gives the body and the line of a key', () => {
    const parsed = parseMarkdown('---\na: 1\nb: two\n---\n\nBody here\n', 'x.md');
    expect(parsed.ok && parsed.value.body).toBe('Body here');
    expect(parsed.ok && parsed.value.lineOf(['b'])).toBe(3);
  });
});

describe('agent files', () => {
  it('drops allow rules (a profile only tightens) and maps Claude Code tool names', () => {
    const parsed = parseAgent(
      file(
        '---\ntools: Read, Grep, mcp__memory__read_graph, Bash(git:*)\npolicy:\n  bash: allow\n  fetch: deny\n---\nBe brief.',
      ),
      'repo',
      'subagent',
    );
    expect(parsed).toMatchObject({
      ok: true,
      value: {
        name: 'x',
        tools: ['read_file', 'grep', 'memory__read_graph'],
        policy: { fetch: 'deny' },
        mode: 'subagent',
        prompt: 'Be brief.',
      },
    });
    expect(parsed.ok && parsed.value.notes).toHaveLength(2);
  });

  it('refuses an unknown key with its line', () => {
    expect(parseAgent(file('---\ndescription: a\nmodle: x\n---\n'), 'user')).toEqual({
      ok: false,
      problem:
        'x.md:3 modle: unknown key; did you mean "mode"? expected one of: name, description, model, tools, policy, maxSteps, mode, color, temperature',
    });
  });
});

describe('the tools a profile sees', () => {
  const all = table('read_file', 'bash', 'memory__read', 'memory__write', 'git__log');
  const names = (tools: string[]) => [
    ...agentTools(all, {
      name: 'a',
      description: '',
      policy: {},
      mode: 'all',
      prompt: '',
      source: 'user',
      notes: [],
      tools,
    }).keys(),
  ];

  it.each([
    [['memory__*'], ['memory__read', 'memory__write']],
    [['!bash'], ['read_file', 'memory__read', 'memory__write', 'git__log']],
    [
      ['git', 'read_file'],
      ['read_file', 'git__log'],
    ],
    [['memory__*', '!memory__write'], ['memory__read']],
  ])('%j → %j', (tools, expected) => {
    expect(names(tools)).toEqual(expected);
  });
});

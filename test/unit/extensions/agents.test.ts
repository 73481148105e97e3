import { describe, expect, it } from 'vitest';
import { parseAgent } from '../../../src/main/extensions/agents.ts';
import { parseMarkdown } from '../../../src/main/extensions/parse.ts';
import { chainTools, profileLimit } from '../../../src/main/extensions/turn.ts';
import type { ToolEntry, ToolTable } from '../../../src/main/calls/types.ts';

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
        profile: {
          name: 'x',
          tools: ['read_file', 'grep', 'memory__read_graph'],
          policy: { fetch: 'deny' },
          mode: 'subagent',
          prompt: 'Be brief.',
        },
        notes: [],
      },
    });
    expect(parsed.ok && parsed.value?.profile.notes).toHaveLength(2);
  });

  it('an unknown key is a note with its line, never a reason to skip the file', () => {
    expect(parseAgent(file('---\ndescription: a\nmodle: x\n---\n'), 'user')).toMatchObject({
      ok: true,
      value: {
        profile: { name: 'x', description: 'a' },
        notes: ['x.md:3 modle: not used by niffler; ignored'],
      },
    });
  });

  it('a wrong value for a key niffler uses still skips the file, with its line', () => {
    expect(parseAgent(file('---\ndescription: a\nmaxTurns: many\n---\n'), 'user')).toEqual({
      ok: false,
      problem: 'x.md:3 maxTurns: expected a number, got "many"',
    });
  });
});

describe('Claude Code and opencode agent files, unchanged', () => {
  it('a Claude Code subagent: inherit, disallowedTools, maxTurns, permissionMode plan; skills: limits the skills it is offered', () => {
    const parsed = parseAgent(
      file(
        [
          '---',
          'name: code-reviewer',
          'description: Reviews code. Use PROACTIVELY after changes.',
          'tools: Read, Grep, Glob, Bash',
          'disallowedTools: Bash',
          'model: inherit',
          'maxTurns: 8',
          'permissionMode: plan',
          'skills: [lint-rules]',
          'color: cyan',
          '---',
          'You are a senior reviewer.',
        ].join('\n'),
        'code-reviewer',
      ),
      'repo',
      'subagent',
    );
    expect(parsed).toMatchObject({
      ok: true,
      value: {
        profile: {
          name: 'code-reviewer',
          tools: ['read_file', 'grep', 'glob', 'bash', '!bash'],
          policy: { write_file: 'deny', edit_file: 'deny', bash: 'deny' },
          maxSteps: 8,
          mode: 'subagent',
          prompt: 'You are a senior reviewer.',
          skills: ['lint-rules'],
          notes: [],
        },
        notes: [],
      },
    });
    expect(parsed.ok && parsed.value && 'model' in parsed.value.profile).toBe(false);
    expect(
      parseAgent(file('---\nmodel: sonnet\npermissionMode: bypassPermissions\n---\n'), 'repo'),
    ).toMatchObject({
      ok: true,
      value: {
        profile: {
          model: 'sonnet',
          policy: {},
          notes: [expect.stringContaining('permissionMode bypassPermissions not used')],
        },
      },
    });
  });

  it('an agent file with hooks loads; the hooks are noted as not run, saying where hooks go', () => {
    expect(
      parseAgent(file('---\ndescription: a\nhooks:\n  PreToolUse: []\n---\n'), 'repo'),
    ).toMatchObject({
      ok: true,
      value: {
        profile: { name: 'x', description: 'a' },
        notes: [
          'x.md:3 hooks: not run: niffler runs hooks from .claude/settings.json and its config (hooks:), not while one agent runs; ignored',
        ],
      },
    });
  });

  it('an opencode agent: tools as a mapping, permission per command as its strictest, disable', () => {
    const parsed = parseAgent(
      file(
        [
          '---',
          'description: Writes docs',
          'mode: subagent',
          'model: anthropic/claude-sonnet-4-20250514',
          'temperature: 0.1',
          'tools:',
          '  bash: false',
          '  webfetch: false',
          'permission:',
          '  edit: ask',
          '  bash:',
          '    "git diff": allow',
          '    "git push": deny',
          '    "*": ask',
          '---',
          'Write clear docs.',
        ].join('\n'),
        'docs',
      ),
      'repo',
    );
    expect(parsed).toMatchObject({
      ok: true,
      value: {
        profile: {
          name: 'docs',
          mode: 'subagent',
          model: 'anthropic/claude-sonnet-4-20250514',
          tools: ['!bash', '!fetch'],
          policy: { edit_file: 'ask', write_file: 'ask', bash: 'deny' },
          notes: [
            expect.stringContaining('permission bash: niffler cannot hold to rules per command'),
          ],
        },
      },
    });
    const only = parseAgent(file('---\ntools:\n  "*": false\n  read: true\n---\n'), 'repo');
    expect(only.ok && only.value?.profile.tools).toEqual(['read_file']);
    const steps = parseAgent(file('---\ndescription: quick\nsteps: 5\n---\n'), 'repo');
    expect(steps.ok && steps.value?.profile.maxSteps).toBe(5);
    expect(parseAgent(file('---\ndisable: true\n---\n'), 'repo')).toEqual({
      ok: true,
      value: undefined,
    });
  });
});

describe('the tools a profile sees', () => {
  const all = table('read_file', 'bash', 'memory__read', 'memory__write', 'git__log');
  const names = (tools: string[]) => [
    ...chainTools(all, [
      profileLimit({
        name: 'a',
        description: '',
        policy: {},
        mode: 'all',
        prompt: '',
        source: 'user',
        notes: [],
        tools,
      }),
    ]).keys(),
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

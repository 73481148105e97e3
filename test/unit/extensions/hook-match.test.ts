import { describe, expect, it } from 'vitest';
import {
  claudeToolName,
  fromClaudeInput,
  toClaudeInput,
} from '../../../src/main/extensions/claude-names.ts';
import {
  handlerLine,
  matcherSelects,
  ruleSelects,
} from '../../../src/main/extensions/hook-match.ts';

// Matchers, `if` rules and tool names as Claude Code's hooks reference defines them.

describe('matchers as Claude Code reads them', () => {
  it.each([
    [undefined, ['Bash'], true],
    ['', ['Bash'], true],
    ['*', ['Bash'], true],
    ['Bash', ['Bash'], true],
    ['Edit|Write|MultiEdit', ['Write'], true],
    ['Edit,Write', ['Write'], true],
    ['Edit', ['MultiEdit'], false],
    ['mcp__memory__.*', ['mcp__memory__create_entities'], true],
    ['^Notebook', ['NotebookEdit'], true],
    ['startup|resume', ['compact'], false],
  ] as const)('%j selects %j: %s', (matcher, names, expected) => {
    expect(matcherSelects(matcher, names)).toBe(expected);
  });
});

describe('a handler’s if rule', () => {
  const call = (names: string[], input: unknown) => ({ names, input, root: '/r' });
  it('selects by tool, command pattern and path glob; fails open on what it cannot read', () => {
    expect(ruleSelects('Bash(git *)', call(['Bash'], { command: 'npm test && git push' }))).toBe(
      true,
    );
    expect(ruleSelects('Bash(git *)', call(['Bash'], { command: 'npm test' }))).toBe(false);
    expect(ruleSelects('Edit(*.ts)', call(['Edit'], { file_path: '/r/src/a.ts' }))).toBe(true);
    expect(ruleSelects('Edit(*.ts)', call(['Edit'], { file_path: '/r/README.md' }))).toBe(false);
    expect(ruleSelects('Read', call(['Edit'], {}))).toBe(false);
    expect(ruleSelects('not a rule (', call(['Edit'], {}))).toBe(true);
    expect(ruleSelects('Bash', undefined)).toBe(false);
  });
});

describe('the command a handler runs', () => {
  it('leaves a shell line to the shell; quotes exec-form arguments, the project dir filled in', () => {
    expect(handlerLine({ command: '"${CLAUDE_PROJECT_DIR}"/x.sh $HOME' }, '/r')).toBe(
      '"${CLAUDE_PROJECT_DIR}"/x.sh $HOME',
    );
    expect(
      handlerLine({ command: 'python3', args: ['${CLAUDE_PROJECT_DIR}/a b.py', "it's"] }, '/r'),
    ).toBe(`python3 '/r/a b.py' 'it'\\''s'`);
  });
});

describe('Claude Code’s names for niffler’s tools, both ways', () => {
  it('Edit with file_path (absolute), old_string, new_string; Bash timeout in ms; mcp__ names', () => {
    expect(claudeToolName('edit_file', 'builtin')).toBe('Edit');
    expect(claudeToolName('memory__create', 'mcp')).toBe('mcp__memory__create');
    expect(toClaudeInput('edit_file', { path: 'a.ts', oldText: 'x', newText: 'y' }, '/r')).toEqual({
      file_path: '/r/a.ts',
      old_string: 'x',
      new_string: 'y',
    });
    expect(toClaudeInput('bash', { command: 'ls', timeout: 5 }, '/r')).toEqual({
      command: 'ls',
      timeout: 5000,
    });
    expect(
      fromClaudeInput('bash', { command: 'ls -a', timeout: 2000, description: 'list' }),
    ).toEqual({ command: 'ls -a', timeout: 2 });
  });
});

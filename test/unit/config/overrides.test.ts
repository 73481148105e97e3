import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  parseSetFlag,
  type FlagOverride,
  type LoadOptions,
} from '../../../src/main/config/load.ts';
import { loadConfig } from '../../../src/main/extensions/workspace-config.ts';
import { parseKeyPath } from '../../../src/main/config/merge.ts';
import { trustRepository } from '../../../src/main/trust/decide.ts';
import { makeWorkspace } from './helpers.ts';

const load = (options: LoadOptions) => {
  const result = loadConfig(options);
  if (!result.ok) throw result.error;
  return result.value;
};

const failure = (options: LoadOptions): string => {
  const result = loadConfig(options);
  if (result.ok) throw new Error('expected the config to be refused');
  return result.error.message;
};

const trustAll = (ws: ReturnType<typeof makeWorkspace>) => {
  const loaded = load({ cwd: ws.repo, env: ws.env });
  trustRepository(path.join(ws.home, 'trust.json'), loaded.root, loaded.trust.contribution);
};

const sets = (...texts: string[]): FlagOverride[] => texts.map(parseSetFlag);

const GLOBAL_FAST =
  'models:\n  fast:\n    provider: openai\n    baseUrl: http://127.0.0.1:9/v1\n    model: small\n';

describe('layers merge first, then the merged config is validated once', () => {
  it('a repository model entry that sets only `model` completes the global entry', () => {
    const ws = makeWorkspace();
    ws.writeGlobal(GLOBAL_FAST);
    ws.writeRepo('model: fast\nmodels:\n  fast:\n    model: bigger\n');
    trustAll(ws);
    const { config } = load({ cwd: ws.repo, env: ws.env });
    expect(config.model).toBe('fast');
    expect(config.models['fast']).toMatchObject({
      provider: 'openai',
      baseUrl: 'http://127.0.0.1:9/v1',
      model: 'bigger',
    });
  });

  it('--set models.local.model=… changes the built-in model and keeps its provider', () => {
    const ws = makeWorkspace();
    const { config } = load({
      cwd: ws.repo,
      env: ws.env,
      flags: sets('models.local.model=qwen3:4b'),
    });
    expect(config.models['local']).toMatchObject({ provider: 'ollama', model: 'qwen3:4b' });
  });

  it('NIFFLER_MODEL picks an entry that two files complete together', () => {
    const ws = makeWorkspace();
    ws.writeGlobal(GLOBAL_FAST);
    ws.writeRepo('models:\n  fast:\n    temperature: 0.2\n');
    trustAll(ws);
    const { config } = load({ cwd: ws.repo, env: { ...ws.env, NIFFLER_MODEL: 'fast' } });
    expect(config.model).toBe('fast');
    expect(config.models['fast']).toMatchObject({ provider: 'openai', temperature: 0.2 });
  });

  it('a merged entry that lacks a required key names the file and line that wrote it', () => {
    const ws = makeWorkspace();
    const file = ws.writeRepo('model: fast\nmodels:\n  fast:\n    model: x\n');
    const message = failure({ cwd: ws.repo, env: ws.env });
    const shown = file.replace(ws.base, '~');
    expect(message).toBe(
      `${shown}:3 models.fast.provider: expected one of "openai", "anthropic", "ollama", got nothing; ` +
        `no file, variable or flag sets it (the entry: ${shown}:3 models.fast)`,
    );
  });

  it('a value of the wrong type is placed at the file that set it, even where a higher layer hides it', () => {
    const ws = makeWorkspace();
    const global = ws.writeGlobal('agent:\n  maxSteps: many\n');
    ws.writeRepo('agent:\n  maxSteps: 5\n');
    expect(failure({ cwd: ws.repo, env: ws.env })).toBe(
      `${global.replace(ws.base, '~')}:2 agent.maxSteps: expected a number, got "many"`,
    );
  });

  it('a flag that breaks the merged value is named as the culprit', () => {
    const ws = makeWorkspace();
    ws.writeGlobal(GLOBAL_FAST);
    expect(failure({ cwd: ws.repo, env: ws.env, flags: sets('models.fast.provider=gemini') })).toBe(
      '--set models.fast.provider (models.fast.provider): expected one of "openai", "anthropic", "ollama", got "gemini"',
    );
    expect(failure({ cwd: ws.repo, env: ws.env, flags: sets('agent.maxSteps=abc') })).toBe(
      '--set agent.maxSteps (agent.maxSteps): expected a number, got "abc"',
    );
  });
});

describe('--set and environment overrides set exactly the path they name', () => {
  it('--set mcpServers.X.timeout=30 keeps the rest of X', () => {
    const ws = makeWorkspace();
    ws.writeGlobal(
      'mcpServers:\n  fs:\n    command: node\n    args: [server.js]\n    env: { K: v }\n    timeout: 5\n',
    );
    const loaded = load({ cwd: ws.repo, env: ws.env, flags: sets('mcpServers.fs.timeout=30') });
    expect(loaded.config.mcpServers['fs']).toEqual({
      command: 'node',
      args: ['server.js'],
      env: { K: 'v' },
      timeout: 30,
    });
    expect(loaded.servers[0]).toMatchObject({ name: 'fs', timeoutMs: 30_000, trust: 'yours' });
    expect(loaded.origins.get('mcpServers\u0000fs\u0000timeout')).toMatchObject({
      kind: 'flag',
      label: '--set mcpServers.fs.timeout',
    });
    expect(loaded.origins.get('mcpServers\u0000fs\u0000command')?.kind).toBe('global');
  });

  it('sets a list item by index, appends at the end, and adds new keys', () => {
    const ws = makeWorkspace();
    ws.writeGlobal('tools:\n  allowedPaths: [/a, /b]\n');
    const { config } = load({
      cwd: ws.repo,
      env: ws.env,
      flags: sets(
        'tools.allowedPaths[1]=/B',
        'tools.allowedPaths.2=/c',
        'tools.policy.memory__*=deny',
        'mcpServers.new.command=node',
      ),
    });
    expect(config.tools.allowedPaths).toEqual(['/a', '/B', '/c']);
    expect(config.tools.policy).toEqual({ 'memory__*': 'deny' });
    expect(config.mcpServers['new']).toEqual({ command: 'node' });
  });

  it('a quoted key may hold dots', () => {
    const ws = makeWorkspace();
    ws.writeGlobal('mcpServers:\n  "my.server":\n    command: node\n');
    const { config } = load({
      cwd: ws.repo,
      env: ws.env,
      flags: sets('mcpServers."my.server".timeout=9'),
    });
    expect(config.mcpServers['my.server']).toEqual({ command: 'node', timeout: 9 });
  });

  it('refuses to set through a scalar or past the end of a list, naming the flag', () => {
    const ws = makeWorkspace();
    ws.writeGlobal('tools:\n  allowedPaths: [/a]\n');
    expect(failure({ cwd: ws.repo, env: ws.env, flags: sets('model.name=x') })).toBe(
      '--set model.name: cannot set model.name: model is a string, not a mapping or list',
    );
    expect(failure({ cwd: ws.repo, env: ws.env, flags: sets('tools.allowedPaths[3]=/x') })).toBe(
      '--set tools.allowedPaths[3]: cannot set tools.allowedPaths[3]: tools.allowedPaths is a list of 1 (index 3 would leave a gap)',
    );
  });

  it('parses key paths: dots, [N], quotes; refuses malformed ones', () => {
    expect(parseKeyPath('a.b[0].c')).toEqual(['a', 'b', 0, 'c']);
    expect(parseKeyPath('mcpServers."a.b".timeout')).toEqual(['mcpServers', 'a.b', 'timeout']);
    expect(parseKeyPath('tools.policy.memory__*')).toEqual(['tools', 'policy', 'memory__*']);
    for (const bad of ['', '.a', 'a.', 'a..b', '[0]', 'a.[0]', 'a"b"', 'a[x]'])
      expect(parseKeyPath(bad), bad).toBeUndefined();
    expect(() => parseSetFlag('a..b=1')).toThrow(/--set expects key.path=value/);
  });
});

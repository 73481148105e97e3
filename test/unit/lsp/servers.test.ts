import { chmodSync, mkdirSync, realpathSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/main/extensions/workspace-config.ts';
import { resolveLspServers } from '../../../src/main/lsp/servers.ts';
import { trustRepository, untrustedSummary } from '../../../src/main/trust/decide.ts';
import { makeWorkspace } from '../config/helpers.ts';

// Which language servers run, from the config, the machine (PATH, node_modules/.bin) and trust.

const TSL = realpathSync('node_modules/.bin/typescript-language-server');
const TSSERVER = realpathSync('node_modules/typescript/lib/tsserver.js');

/** A workspace whose PATH holds `bins` (directories), and what its config resolves to. */
const setup = () => {
  const ws = makeWorkspace();
  const env = (pathDirs: string[]) => ({ ...ws.env, PATH: pathDirs.join(path.delimiter) });
  const load = (pathDirs: string[] = []) => {
    const result = loadConfig({ root: ws.repo, env: env(pathDirs) });
    if (!result.ok) throw result.error;
    return result.value;
  };
  const resolve = (pathDirs: string[] = []) => {
    const servers = resolveLspServers(load(pathDirs), env(pathDirs), ws.home);
    return Object.fromEntries(servers.map((s) => [s.name, s]));
  };
  const trust = () => {
    const loaded = load();
    trustRepository(
      path.join(ws.home, 'trust.json'),
      loaded.root,
      loaded.trust.contribution,
      ws.env,
    );
  };
  /** An executable script named `name` in `dir`. */
  const program = (dir: string, name: string) => {
    const file = ws.write(path.join(dir, name), '#!/bin/sh\nexit 0\n');
    chmodSync(file, 0o755);
    return file;
  };
  return { ws, load, resolve, trust, program };
};

describe('language servers: what runs', () => {
  it("the user's typescript-language-server on PATH runs as theirs, with the TypeScript beside it", () => {
    const { resolve } = setup();
    const { typescript } = resolve([
      path.dirname(path.resolve('node_modules/.bin/typescript-language-server')),
    ]);
    expect(typescript).toMatchObject({
      source: 'builtin',
      spec: { args: ['--stdio'], source: 'builtin' },
    });
    expect(realpathSync(typescript!.spec!.command)).toBe(TSL);
    expect(typescript!.spec!.initializationOptions).toEqual({
      disableAutomaticTypingAcquisition: true,
      tsserver: { useSyntaxServer: 'never', path: TSSERVER },
    });
    expect(typescript!.spec!.languages).toMatchObject({
      '.ts': 'typescript',
      '.tsx': 'typescriptreact',
    });
  });

  it('a server that is not installed is missing, and says how to get it', () => {
    const { resolve } = setup();
    expect(resolve([])['typescript']).toMatchObject({
      state: 'missing',
      reason:
        'typescript-language-server not found on PATH; install it: npm install -g typescript-language-server typescript',
    });
  });

  it('servers that run the project’s code wait for trust; trusted, they are looked for', () => {
    const { resolve, trust } = setup();
    const before = resolve([]);
    for (const name of ['go', 'rust', 'python'])
      expect(before[name]).toMatchObject({
        state: 'untrusted',
        reason: expect.stringMatching(/starts once you trust this repository \(niffler trust\)$/),
      });
    expect(before['rust']!.reason).toContain('build scripts and procedural macros');
    trust();
    expect(resolve([])['go']).toMatchObject({
      state: 'missing',
      reason: expect.stringContaining('gopls not found on PATH nor in node_modules/.bin'),
    });
  });

  it("a repository's own server program is part of its trust, used only once trusted, and a new version of it asks again", () => {
    const { ws, load, resolve, trust, program } = setup();
    const bin = program(path.join(ws.repo, 'node_modules', '.bin'), 'typescript-language-server');
    const parts = load().trust.contribution.parts.filter((p) => p.key.startsWith('bin:'));
    expect(parts).toMatchObject([
      {
        key: 'bin:node_modules/.bin/typescript-language-server',
        kind: 'server',
        path: ['lsp', 'typescript'],
      },
    ]);
    expect(untrustedSummary(load().trust)).toContain(
      'its servers language server typescript are not started',
    );
    // Untrusted: the user's own (PATH) is used instead; without one, it is missing.
    expect(resolve([])['typescript']).toMatchObject({ state: 'missing' });
    const userBin = path.dirname(path.resolve('node_modules/.bin/typescript-language-server'));
    expect(resolve([userBin])['typescript']!.spec!.command).toBe(
      path.join(userBin, 'typescript-language-server'),
    );
    // A PATH entry inside the repository is the repository's, not the user's.
    expect(resolve([path.join(ws.repo, 'node_modules', '.bin')])['typescript']).toMatchObject({
      state: 'missing',
    });
    trust();
    const trusted = resolve([userBin])['typescript']!;
    expect(trusted.spec!.command).toBe(bin);
    // No TypeScript beside it: in a trusted repository it may take the repository's own.
    expect(trusted.spec!.initializationOptions).toEqual({
      disableAutomaticTypingAcquisition: true,
      tsserver: { useSyntaxServer: 'never' },
    });
    ws.write(bin, '#!/bin/sh\necho another version\n');
    expect(load().trust.level).toBe('changed');
    expect(resolve([userBin])['typescript']!.spec!.command).toBe(
      path.join(userBin, 'typescript-language-server'),
    );
  });

  it("without a TypeScript beside the server, an untrusted repository's own would run: it waits for trust", () => {
    const { ws, resolve, program } = setup();
    const userBin = path.dirname(
      program(path.join(ws.base, 'user-bin'), 'typescript-language-server'),
    );
    expect(resolve([userBin])['typescript']).toMatchObject({
      state: 'untrusted',
      reason: expect.stringContaining(
        "so it would run this repository's (node_modules/typescript)",
      ),
    });
  });

  it("a repository's lsp entries wait for trust; yours run; switched off is disabled", () => {
    const { ws, resolve, trust } = setup();
    ws.writeRepo(
      `lsp:\n  typescript:\n    command: ${JSON.stringify(TSL)}\n  vue:\n    command: vue-language-server\n    extensions: [.vue]\n`,
    );
    const untrusted = resolve([]);
    expect(untrusted['typescript']).toMatchObject({
      source: 'repository',
      state: 'untrusted',
      reason: expect.stringMatching(
        /config\.yaml:3 lsp\.typescript comes from this repository, which is not trusted/,
      ),
    });
    expect(untrusted['vue']).toMatchObject({ state: 'untrusted', languages: { '.vue': 'vue' } });
    trust();
    const trusted = resolve([]);
    expect(trusted['typescript']!.spec!.command).toBe(TSL);
    expect(trusted['vue']).toMatchObject({
      state: 'missing',
      reason: 'vue-language-server not found on PATH nor in node_modules/.bin',
    });
    ws.writeGlobal('lsp:\n  go:\n    enabled: false\n');
    expect(resolve([])['go']).toMatchObject({
      state: 'disabled',
      reason: 'lsp.go.enabled is false',
    });
    ws.writeGlobal('lsp:\n  enabled: false\n');
    expect(resolve([])['typescript']).toMatchObject({
      state: 'disabled',
      reason: 'lsp.enabled is false',
    });
  });

  it('a repository that turns language servers on is not listened to until trusted', () => {
    const { ws, load } = setup();
    ws.writeGlobal('lsp:\n  enabled: false\n');
    ws.writeRepo('lsp:\n  enabled: true\n  diagnosticsWait: 1\n');
    const loaded = load();
    expect(loaded.config.lsp).toMatchObject({ enabled: false, diagnosticsWait: 1 });
    expect(loaded.trust.contribution.parts.map((p) => p.key)).toEqual(['repo:lsp.enabled']);
  });

  it('a server of your own needs command and extensions; a misspelled setting is named', () => {
    const { ws } = setup();
    ws.writeGlobal('lsp:\n  vue:\n    command: vue-language-server\n');
    const missing = loadConfig({ root: ws.repo, env: ws.env });
    expect(!missing.ok && missing.error.message).toContain(
      'lsp.vue is not a built-in server (typescript, python, go, rust): it needs `extensions`',
    );
    ws.writeGlobal('lsp:\n  diagnosticWait: 5\n');
    const typo = loadConfig({ root: ws.repo, env: ws.env });
    expect(!typo.ok && typo.error.message).toContain(
      'lsp.diagnosticWait: expected a mapping, got 5; did you mean "diagnosticsWait"?',
    );
  });

  it('a symlinked repository program counts by the file it leads to', () => {
    const { ws, load } = setup();
    mkdirSync(path.join(ws.repo, 'node_modules', '.bin'), { recursive: true });
    symlinkSync(TSL, path.join(ws.repo, 'node_modules', '.bin', 'typescript-language-server'));
    const [part] = load().trust.contribution.parts;
    expect(part!.value).toMatchObject({
      command: 'node_modules/.bin/typescript-language-server',
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
  });
});

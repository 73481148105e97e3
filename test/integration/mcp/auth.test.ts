import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { McpHost } from '../../../src/main/threads/mcp.ts';
import type { McpServerSpec } from '../../../src/workers/protocol/mcp.ts';
import { remoteSpec } from '../../fixtures/mcp/servers.ts';
import { startOAuthFixture, type OAuthFixtureOptions } from '../../fixtures/mcp/oauth-server.ts';
import { ready, startHost } from './helpers.ts';

/**
 * Opens an authorization URL like a browser: the fixture approves at once and redirects to
 * niffler's loopback receiver, whose page this returns. `forge` may change the code on the way.
 */
const approve = async (url: string, forge?: (code: string) => string): Promise<string> => {
  const response = await fetch(url, { redirect: 'manual' });
  const callback = new URL(response.headers.get('location')!);
  const code = callback.searchParams.get('code');
  if (forge && code) callback.searchParams.set('code', forge(code));
  return (await fetch(callback)).text();
};

/** Plays the user's browser: every authorization URL a server shows is opened with `open`. */
const browseAll = (host: McpHost, open: (url: string) => Promise<unknown> = approve): string[] => {
  const seen: string[] = [];
  host.on((event) => {
    const url = event.type === 'status' ? event.status.authUrl : undefined;
    if (!url || seen.includes(url)) return;
    seen.push(url);
    void open(url);
  });
  return seen;
};

/** The OAuth fixture and a worker whose server `web` starts only by hand, tokens in `authDir`. */
const setup = async (
  options: OAuthFixtureOptions = {},
  authDir = tempDir(),
  spec: Partial<McpServerSpec> = {},
) => {
  const fixture = await startOAuthFixture(options);
  onTestFinished(() => fixture.close());
  const { host } = await startWeb(fixture.url, authDir, false, spec);
  return { fixture, host, authDir };
};

const tempDir = () => mkdtempSync(path.join(tmpdir(), 'niffler-auth-'));

const startWeb = async (
  url: string,
  authDir: string,
  autoStart: boolean,
  spec: Partial<McpServerSpec> = {},
) => {
  const t = await startHost([remoteSpec('web', url, 'http', { ...spec, autoStart })], {
    authDir,
  });
  onTestFinished(() => t.host.close());
  return t;
};

describe('OAuth for remote servers', () => {
  it('401 → authorization in the browser → token → the tool call succeeds; tokens stored 0600', async () => {
    const { fixture, host, authDir } = await setup();
    const urls = browseAll(host);

    expect((await host.login('web')).state).toBe('ready');
    expect(await host.callTool('web__say', { text: 'hi' })).toMatchObject({
      ok: true,
      output: 'oauth: hi',
    });

    expect(urls).toHaveLength(1);
    const [authorize] = fixture.log.authorize;
    expect(authorize?.get('code_challenge_method')).toBe('S256');
    expect(authorize?.get('resource')).toBe(fixture.url);
    expect(authorize?.get('scope')).toBe('mcp');
    expect(fixture.log.token[0]?.get('resource')).toBe(fixture.url);
    const [file] = readdirSync(authDir);
    const stat = statSync(path.join(authDir, file!));
    expect(stat.mode & 0o777).toBe(0o600);
    expect(statSync(authDir).mode & 0o777).toBe(0o700);
    const stored = JSON.parse(readFileSync(path.join(authDir, file!), 'utf8'));
    expect(stored.url).toBe(fixture.url);
    // Kept under the issuer of the authorization server that issued them (SEP-2352).
    expect(Object.keys(stored.issuers)).toEqual([stored.latest]);
    const { tokens } = stored.issuers[stored.latest];
    expect(tokens.issuer).toBe(stored.latest);
    expect(fixture.log.bearers.at(-1)).toBe(tokens.access_token);
    const status = (await host.status()).find((s) => s.name === 'web');
    expect(JSON.stringify(status)).not.toContain(tokens.access_token);
  });

  it('refreshes an expired access token without the browser', async () => {
    const { fixture, host } = await setup();
    browseAll(host);
    expect((await host.login('web')).state).toBe('ready');
    fixture.expireAccessTokens();
    expect(await host.callTool('web__say', { text: 'again' })).toMatchObject({ ok: true });
    expect(fixture.log.authorize).toHaveLength(1);
    expect(fixture.log.token.map((b) => b.get('grant_type'))).toEqual([
      'authorization_code',
      'refresh_token',
    ]);
  });

  it('a revoked authorization puts a server that nobody started by hand in needs-auth', async () => {
    const { fixture, host, authDir } = await setup();
    browseAll(host);
    expect((await host.login('web')).state).toBe('ready');
    await host.close();

    // Started automatically with the stored tokens: ready, until the authorization is revoked.
    const second = (await startWeb(fixture.url, authDir, true)).host;
    expect((await ready(second, 'web')).state).toBe('ready');
    fixture.revokeAll();
    expect(await second.callTool('web__say', { text: 'x' })).toMatchObject({ ok: false });
    const status = await second.waitForStatus('web', (s) => s.state === 'needs-auth');
    expect(status.lastError?.message).toContain('niffler mcp login web');
    expect(status.authUrl).toBeUndefined();
    expect(fixture.log.authorize).toHaveLength(1);

    // And a fresh start with the dead tokens waits the same way, without a browser.
    const third = (await startWeb(fixture.url, authDir, true)).host;
    const again = await third.waitForStatus(
      'web',
      (s) => s.state !== 'starting' && s.state !== 'stopped',
    );
    expect(again.state).toBe('needs-auth');
    expect(fixture.log.authorize).toHaveLength(1);
  });

  it('never registers nor authorizes on its own: an auto-started server waits in needs-auth', async () => {
    const fixture = await startOAuthFixture();
    onTestFinished(() => fixture.close());
    const { host } = await startWeb(fixture.url, tempDir(), true);
    const status = await host.waitForStatus(
      'web',
      (s) => s.state === 'needs-auth' || s.state === 'failed',
    );
    expect(status.state).toBe('needs-auth');
    expect(fixture.log.register).toBe(0);
    expect(fixture.log.authorize).toHaveLength(0);
  });

  it('steps up on 403 insufficient_scope in the middle of a call', async () => {
    const { fixture, host } = await setup({ callScope: 'write' });
    const urls = browseAll(host);
    expect((await host.login('web')).state).toBe('ready');
    const up = await host.callTool('web__say', { text: 'up' });
    expect(up, JSON.stringify(up)).toMatchObject({ ok: true });
    expect(urls).toHaveLength(2);
    expect(fixture.log.authorize.map((a) => a.get('scope'))).toEqual(['mcp', 'mcp write']);
  });

  it('refuses a server whose metadata names another resource', async () => {
    const { fixture, host } = await setup({ resource: 'https://evil.example.com/mcp' });
    const urls = browseAll(host);
    const status = await host.login('web');
    expect(status.state).toBe('failed');
    expect(status.lastError?.message).toMatch(
      /names the resource https:\/\/evil\.example\.com\/mcp.*refusing/,
    );
    expect(urls).toHaveLength(0);
    expect(fixture.log.authorize).toHaveLength(0);
  });

  it('a browser authorization may outlast startupTimeout: the start waits for it, then is ready', async () => {
    // Streamable HTTP authorizes inside the initialize request: its deadline must wait too.
    // Generous, so that discovery before the URL and the token exchange after it fit easily on a
    // loaded machine; the browser then takes longer than that.
    const startupTimeoutMs = 3_000;
    const { fixture, host } = await setup({}, tempDir(), { startupTimeoutMs });
    const pages: Promise<string>[] = [];
    const urls = browseAll(host, (url) => {
      // The user takes longer in the browser than the server may take to start.
      const page = new Promise((resolve) => setTimeout(resolve, startupTimeoutMs + 1_000))
        .then(() => approve(url))
        .catch((error: unknown) => `browser: ${(error as Error).message}`);
      pages.push(page);
      return page;
    });

    const status = await host.login('web');
    expect(status.state, status.lastError?.message).toBe('ready');
    expect(urls).toHaveLength(1);
    expect(await pages[0]).toContain('niffler is authorized');
    expect(status.restarts).toBe(0);
    expect(await host.callTool('web__say', { text: 'late' })).toMatchObject({
      ok: true,
      output: 'oauth: late',
    });
    expect(fixture.log.authorize).toHaveLength(1);
  });

  it('a start that fails after the browser was asked goes to needs-auth, not to a restart', async () => {
    const { fixture, host } = await setup();
    // The browser comes back with a code the authorization server never issued.
    const urls = browseAll(host, (url) =>
      approve(url, (code) => `${code}-forged`).catch(() => undefined),
    );

    const status = await host.login('web');
    expect(urls).toHaveLength(1);
    expect(status.state, status.lastError?.message).toBe('needs-auth');
    expect(status.lastError?.message).toContain('authorization failed');
    expect(status.nextRestartAt).toBeNull();
    expect(status.authUrl).toBeUndefined();
    expect(fixture.log.token.map((b) => b.get('grant_type'))).toContain('authorization_code');
  });
});

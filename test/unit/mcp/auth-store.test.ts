import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { authFileOf } from '../../../src/main/engine/mcp-handlers.ts';
import { AuthError } from '../../../src/workers/mcp/auth/errors.ts';
import { ServerAuth } from '../../../src/workers/mcp/auth/provider.ts';
import { LoopbackReceiver } from '../../../src/workers/mcp/auth/receiver.ts';
import { AuthStore } from '../../../src/workers/mcp/auth/store.ts';
import { authFileName } from '../../../src/workers/shared/auth-file.ts';

const URL_A = 'https://mcp.example.com/mcp';
const dir = () => path.join(mkdtempSync(path.join(tmpdir(), 'niffler-auth-')), 'auth');
const hooks = { interactive: () => false, onAuthUrl: () => {}, onNeedsAuth: () => {} };

describe('AuthStore', () => {
  it('writes one 0600 file per server URL in a 0700 directory, readable by another process', () => {
    const authDir = dir();
    const store = new AuthStore(URL_A, authDir);
    store.update({
      client: { client_id: 'c1' },
      tokens: { access_token: 'a1', token_type: 'Bearer' },
    });
    expect(store.file).toBe(path.join(authDir, authFileName(URL_A)));
    expect(statSync(store.file!).mode & 0o777).toBe(0o600);
    expect(statSync(authDir).mode & 0o777).toBe(0o700);
    expect(new AuthStore(URL_A, authDir).get()).toMatchObject({
      url: URL_A,
      client: { client_id: 'c1' },
      tokens: { access_token: 'a1' },
    });
    expect(new AuthStore('https://other.example.com/mcp', authDir).get().tokens).toBeUndefined();
  });

  it('a refresh replaces the tokens with their expiry and is seen after reload', () => {
    const authDir = dir();
    const auth = new ServerAuth('s', URL_A, {}, new AuthStore(URL_A, authDir), hooks);
    auth.saveTokens({
      access_token: 'a1',
      token_type: 'Bearer',
      refresh_token: 'r1',
      expires_in: 60,
    });
    const before = Date.now();
    auth.saveTokens({
      access_token: 'a2',
      token_type: 'Bearer',
      refresh_token: 'r2',
      expires_in: 3600,
    });
    expect(auth.generation).toBe(2);
    expect(auth.accessToken()).toBe('a2');
    const stored = new AuthStore(URL_A, authDir).reload();
    expect(stored.tokens?.refresh_token).toBe('r2');
    expect(stored.expiresAt).toBeGreaterThanOrEqual(before + 3_600_000);
  });

  it('logout removes the file main names for that URL; clearing tokens keeps the registration', () => {
    const authDir = dir();
    const store = new AuthStore(URL_A, authDir);
    store.update({
      client: { client_id: 'c1' },
      tokens: { access_token: 'a1', token_type: 'Bearer' },
    });
    store.clear('tokens');
    expect(store.reload()).toEqual({ url: URL_A, client: { client_id: 'c1' } });
    expect(authFileOf(authDir, URL_A)).toBe(store.file);
    store.clear('all');
    expect(existsSync(store.file!)).toBe(false);
    expect(store.reload()).toEqual({ url: URL_A });
  });

  it('keeps everything in memory without a directory', () => {
    const store = new AuthStore(URL_A, undefined);
    store.update({ tokens: { access_token: 'a1', token_type: 'Bearer' } });
    expect(store.file).toBeUndefined();
    expect(store.reload().tokens?.access_token).toBe('a1');
  });

  it('a torn file reads as nothing stored', async () => {
    const authDir = dir();
    const store = new AuthStore(URL_A, authDir);
    store.update({ tokens: { access_token: 'a1', token_type: 'Bearer' } });
    const { writeFileSync } = await import('node:fs');
    writeFileSync(store.file!, '{"url": "https://mcp.exa');
    expect(store.reload()).toEqual({ url: URL_A });
    expect(readFileSync(store.file!, 'utf8')).not.toContain('a1');
  });
});

describe('credentials keyed by issuer (SEP-2352)', () => {
  const AS1 = 'https://as1.example.com';
  const AS2 = 'https://as2.example.com';

  it("a wave-1 file (one unstamped set) serves without a new login, and becomes that issuer's", async () => {
    const authDir = dir();
    const { mkdirSync, writeFileSync } = await import('node:fs');
    mkdirSync(authDir, { recursive: true, mode: 0o700 });
    const wave1 = {
      url: URL_A,
      client: { client_id: 'c1' },
      tokens: { access_token: 'a1', token_type: 'Bearer', refresh_token: 'r1' },
      expiresAt: Date.now() + 60_000,
    };
    writeFileSync(path.join(authDir, authFileName(URL_A)), JSON.stringify(wave1), { mode: 0o600 });
    const auth = new ServerAuth('s', URL_A, {}, new AuthStore(URL_A, authDir), hooks);
    expect(auth.accessToken()).toBe('a1');
    expect(auth.tokens({ issuer: AS1 })?.refresh_token).toBe('r1');
    expect(await auth.clientInformation({ issuer: AS1 })).toEqual({ client_id: 'c1' });
    // The SDK stamps what it saves after a refresh with the issuer it came from.
    auth.saveTokens({ access_token: 'a2', token_type: 'Bearer', issuer: AS1 }, { issuer: AS1 });
    const stored = JSON.parse(readFileSync(path.join(authDir, authFileName(URL_A)), 'utf8'));
    expect(stored).toMatchObject({ url: URL_A, latest: AS1 });
    expect(stored.issuers[AS1]).toMatchObject({
      client: { client_id: 'c1' },
      tokens: { access_token: 'a2' },
    });
    expect(stored.tokens).toBeUndefined();
    // Another authorization server gets nothing of AS1's.
    expect(auth.tokens({ issuer: AS2 })).toBeUndefined();
    expect(new AuthStore(URL_A, authDir).get(AS2)).toEqual({ url: URL_A });
  });

  it('a configured client is valid at any issuer, stamped with the one that asks', async () => {
    const auth = new ServerAuth(
      's',
      URL_A,
      { clientId: 'pre', clientSecret: 'sh' },
      new AuthStore(URL_A, undefined),
      hooks,
    );
    expect(await auth.clientInformation({ issuer: AS2 })).toEqual({
      client_id: 'pre',
      client_secret: 'sh',
      issuer: AS2,
    });
  });
});

describe('ServerAuth without a user', () => {
  it('asks for a login instead of registering a client nobody can use', async () => {
    const auth = new ServerAuth('s', URL_A, {}, new AuthStore(URL_A, undefined), hooks);
    await expect(auth.clientInformation()).rejects.toThrow(AuthError);
    await expect(auth.clientInformation()).rejects.toThrow('run niffler mcp login s');
    expect(() => auth.redirectToAuthorization(new URL('https://as.example.com/authorize'))).toThrow(
      'needs authorization',
    );
  });
});

describe('LoopbackReceiver', () => {
  it('hands over the code for the state it waits for, and refuses others', async () => {
    const receiver = new LoopbackReceiver('s');
    const redirect = await receiver.listen(0);
    expect(redirect).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    const code = receiver.waitForCode('st1', undefined);
    expect((await fetch(`${redirect}?code=x&state=other`)).status).toBe(400);
    const page = await fetch(`${redirect}?code=c0de&state=st1`);
    expect(page.status).toBe(200);
    expect(await code).toEqual({ code: 'c0de' });
    await receiver.close();
  });

  it('turns a denial into a needs-auth error with the reason', async () => {
    const receiver = new LoopbackReceiver('s');
    const redirect = await receiver.listen(0);
    const refused = expect(receiver.waitForCode('st2', undefined)).rejects.toThrow(
      'the authorization was refused (access_denied: nope)',
    );
    await fetch(`${redirect}?error=access_denied&error_description=nope&state=st2`);
    await refused;
    await receiver.close();
  });
});

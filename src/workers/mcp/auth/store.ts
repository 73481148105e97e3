import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { writeAtomicSync } from '../../shared/atomic.ts';
import path from 'node:path';
import type { StoredOAuthClientInformation, StoredOAuthTokens } from '@modelcontextprotocol/client';
import { authFileName } from '../../shared/auth-file.ts';
import type { StoredDpopKey } from './dpop.ts';

/** The client registration and the tokens one authorization server issued. */
interface Credentials {
  client?: StoredOAuthClientInformation;
  tokens?: StoredOAuthTokens;
  /** Epoch ms when the access token expires (from `expires_in`). */
  expiresAt?: number;
  /** The DPoP key the tokens are bound to (RFC 9449), when the authorization server uses DPoP. */
  dpop?: StoredDpopKey;
}

/**
 * What is kept per server URL: credentials per authorization server (`issuers`, SEP-2352), and
 * which issuer saved last. A file of wave 1 holds one unstamped set at the top level instead; it
 * serves until an issuer saves, which then adopts it (no new login where the issuer is the same).
 */
interface StoredAuth extends Credentials {
  url: string;
  issuers?: Record<string, Credentials>;
  latest?: string;
}

const unstamped = (data: StoredAuth): Credentials => {
  const { client, tokens, expiresAt, dpop } = data;
  return {
    ...(client ? { client } : {}),
    ...(tokens ? { tokens } : {}),
    ...(expiresAt ? { expiresAt } : {}),
    ...(dpop ? { dpop } : {}),
  };
};

const compact = <T extends object>(value: T): T => {
  for (const key of Object.keys(value) as (keyof T)[])
    if (value[key] === undefined) delete value[key];
  return value;
};

/**
 * Tokens and registrations of one server URL: `<authDir>/<sha256(url)>.json`, mode 0600 in a 0700
 * directory, written whole through a rename; keyed by the issuer of the authorization server that
 * issued them, so credentials of one are never sent to another. Without a directory (tests,
 * conformance) it lives in memory only. Reads are cached; `reload()` picks up another process's.
 */
export class AuthStore {
  private data: StoredAuth;
  readonly file: string | undefined;

  constructor(
    readonly url: string,
    dir: string | undefined,
  ) {
    this.file = dir ? path.join(dir, authFileName(url)) : undefined;
    this.data = this.load();
  }

  /**
   * The credentials of `issuer`; without one, those saved last. A wave-1 set (no issuer) serves
   * any issuer that has none of its own.
   */
  get(issuer?: string): Credentials & { url: string } {
    const key = issuer ?? this.data.latest;
    const own = key !== undefined ? this.data.issuers?.[key] : undefined;
    return { url: this.url, ...(own ?? unstamped(this.data)) };
  }

  reload(): Credentials & { url: string } {
    this.data = this.load();
    return this.get();
  }

  /** Changes the credentials of `issuer` (without one: of the issuer that saved last). */
  update(patch: Partial<Credentials>, issuer?: string): void {
    const key = issuer ?? this.data.latest;
    if (key === undefined) {
      this.write(compact({ ...this.data, ...patch, url: this.url }));
      return;
    }
    const current = this.data.issuers?.[key] ?? unstamped(this.data);
    const issuers = { ...this.data.issuers, [key]: compact({ ...current, ...patch }) };
    // The wave-1 set now belongs to this issuer.
    this.write({ url: this.url, issuers, latest: key });
  }

  /** Forgets the tokens (of `issuer`, else of the latest), or everything (the file goes). */
  clear(what: 'tokens' | 'all', issuer?: string): void {
    if (what === 'tokens') return this.update({ tokens: undefined, expiresAt: undefined }, issuer);
    this.data = { url: this.url };
    if (this.file) rmSync(this.file, { force: true });
  }

  private write(next: StoredAuth): void {
    this.data = next;
    if (!this.file) return;
    mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
    writeAtomicSync(this.file, JSON.stringify(next, null, 2), 0o600);
  }

  private load(): StoredAuth {
    if (!this.file) return this.data ?? { url: this.url };
    try {
      const parsed = JSON.parse(readFileSync(this.file, 'utf8')) as StoredAuth;
      return parsed.url === this.url ? parsed : { url: this.url };
    } catch {
      // No file yet, or a torn one: nothing stored.
      return { url: this.url };
    }
  }
}

import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { authFileName } from '../../shared/auth-file.ts';
import type {
  OAuthClientInformationMixed,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';

/** What is kept per server URL: the client registration and the tokens it was issued. */
export interface StoredAuth {
  url: string;
  client?: OAuthClientInformationMixed;
  tokens?: OAuthTokens;
  /** Epoch ms when the access token expires (from `expires_in`). */
  expiresAt?: number;
}

/**
 * Tokens and registrations of one server URL: `<authDir>/<sha256(url)>.json`, mode 0600 in a 0700
 * directory, written whole through a rename. Without a directory (tests, conformance) it lives in
 * memory only. Reads are cached; `reload()` picks up what another process wrote.
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

  get(): StoredAuth {
    return this.data;
  }

  reload(): StoredAuth {
    this.data = this.load();
    return this.data;
  }

  update(patch: Partial<Omit<StoredAuth, 'url'>>): void {
    const next: StoredAuth = { ...this.data, ...patch, url: this.url };
    for (const key of Object.keys(next) as (keyof StoredAuth)[])
      if (next[key] === undefined) delete next[key];
    this.data = next;
    if (!this.file) return;
    mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
    const temp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(temp, JSON.stringify(next, null, 2), { mode: 0o600 });
    renameSync(temp, this.file);
  }

  /** Forgets the tokens, or everything (the file goes). */
  clear(what: 'tokens' | 'all'): void {
    if (what === 'tokens') return this.update({ tokens: undefined, expiresAt: undefined });
    this.data = { url: this.url };
    if (this.file) rmSync(this.file, { force: true });
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

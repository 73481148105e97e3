import { chmodSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { gatewayToken } from '../../../src/main/gateway/token.ts';

const dir = () => {
  const made = mkdtempSync(path.join(tmpdir(), 'niffler-token-'));
  onTestFinished(() => rmSync(made, { recursive: true, force: true }));
  return made;
};

describe("the gateway's bearer token file", () => {
  it('is made private once and read back the same', () => {
    const file = path.join(dir(), 'gateway', 'ws.token');
    const made = gatewayToken(file);
    expect(made.created).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(gatewayToken(file)).toEqual({ ...made, created: false });
  });

  it('refuses a token file others may read, a symlink, and a short token, saying what to do', () => {
    const base = dir();
    const readable = path.join(base, 'readable.token');
    writeFileSync(readable, 'a-token-long-enough-to-be-one\n');
    chmodSync(readable, 0o644);
    expect(() => gatewayToken(readable)).toThrow(/others may read it.*chmod 600/);

    const target = path.join(base, 'elsewhere.token');
    writeFileSync(target, 'a-token-long-enough-to-be-one\n', { mode: 0o600 });
    const link = path.join(base, 'link.token');
    symlinkSync(target, link);
    expect(() => gatewayToken(link)).toThrow(/symlink/);

    const short = path.join(base, 'short.token');
    writeFileSync(short, 'short\n', { mode: 0o600 });
    expect(() => gatewayToken(short)).toThrow(/less than 16 characters/);
  });
});

import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { REDACTED } from '../../src/main/config/redact.ts';
import { createLogger } from '../../src/main/log.ts';

const tempLog = () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nf-log-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return path.join(dir, 'logs', 'daemon.log');
};

const lines = (file: string) =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('createLogger', () => {
  it('writes JSON lines with its fields, at or above its level, in a 0600 file', () => {
    const file = tempLog();
    const log = createLogger({ file, level: 'info' }, { pid: 7 });
    log.debug('not written');
    log.info('started', { root: '/r' });
    log.child({ scope: 'mcp' }).warn('server failed', { server: 'x' });
    expect(lines(file)).toMatchObject([
      { level: 'info', msg: 'started', pid: 7, root: '/r' },
      { level: 'warn', msg: 'server failed', pid: 7, scope: 'mcp', server: 'x' },
    ]);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('never writes a known secret, wherever it appears, nor token-shaped strings', () => {
    const file = tempLog();
    let secrets = ['custom-token-1234'];
    const log = createLogger({ file, secrets: () => secrets });
    log.error('server "gh" answered 401 to custom-token-1234', {
      error: 'header X-Api-Key: custom-token-1234 refused',
      tried: ['custom-token-1234'],
    });
    log.info('model said sk-proj-abcdefghijklmnop');
    // The list is asked for at each line: a reload that adds a secret applies from then on.
    secrets = ['another-secret-987'];
    log.child({ scope: 'api' }).warn('retrying with another-secret-987');
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain('custom-token-1234');
    expect(text).not.toContain('sk-proj-abcdefghijklmnop');
    expect(text).not.toContain('another-secret-987');
    expect(lines(file)[0]).toMatchObject({
      msg: `server "gh" answered 401 to ${REDACTED}`,
      error: `header X-Api-Key: ${REDACTED} refused`,
      tried: [REDACTED],
    });
  });

  it('finds a secret that JSON escapes, and a whole header value a token pattern would cut short', () => {
    const file = tempLog();
    const quoted = 'p"ss\\word-1234';
    const header = 'Bearer abc.def~ghi$jkl#mno';
    const log = createLogger({ file, secrets: () => [header, 'abc.def~ghi$jkl#mno', quoted] });
    log.warn(`sent ${header}`, { password: quoted, note: `tried ${quoted} twice` });
    const text = readFileSync(file, 'utf8');
    for (const part of ['word-1234', 'jkl#mno', 'abc.def']) expect(text).not.toContain(part);
    expect(lines(file)[0]).toMatchObject({
      msg: `sent ${REDACTED}`,
      password: REDACTED,
      note: `tried ${REDACTED} twice`,
    });
  });

  it('rotates to .1 past maxBytes, counting what its children write too', () => {
    const file = tempLog();
    const log = createLogger({ file, maxBytes: 2_000 });
    const child = log.child({ scope: 'mcp' });
    for (let i = 0; i < 30; i++) (i % 2 ? log : child).info('x'.repeat(100), { i });
    expect(existsSync(`${file}.1`)).toBe(true);
    // Each generation stays within a line of the cap: the count saw every writer's lines.
    expect(statSync(`${file}.1`).size).toBeLessThan(2_000 + 200);
    expect(statSync(file).size).toBeLessThan(2_000 + 200);
    const all = [...lines(`${file}.1`), ...lines(file)].map((line) => line['i']);
    expect(all).toEqual(Array.from({ length: 30 }, (_, i) => i).slice(-all.length));
  });

  it('writes nothing without a file', () => {
    expect(() => createLogger().info('dropped')).not.toThrow();
  });
});

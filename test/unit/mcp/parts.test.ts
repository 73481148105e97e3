import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RestartPolicy, withDefaults } from '../../../src/workers/mcp/backoff.ts';
import { Limiter } from '../../../src/workers/mcp/limiter.ts';
import { ServerLog } from '../../../src/workers/mcp/logs.ts';
import { CallStats, percentile } from '../../../src/workers/mcp/metrics.ts';
import { safeEnvironment } from '../../../src/workers/mcp/process-transport.ts';
import { normalizeResult } from '../../../src/workers/mcp/results.ts';
import { toWebSocketUrl } from '../../../src/workers/mcp/transports.ts';

const tmp = () => mkdtempSync(path.join(tmpdir(), 'niffler-unit-'));

describe('RestartPolicy', () => {
  it('backs off exponentially, caps the delay and gives up at maxFailures in the window', () => {
    const policy = new RestartPolicy(withDefaults({ maxFailures: 5 }));
    expect([0, 1, 2, 3].map((i) => policy.next(i))).toEqual([500, 1000, 2000, 4000]);
    expect(policy.next(5)).toBeNull();
    policy.reset();
    expect(policy.next(10)).toBe(500);
  });

  it('forgets failures older than the window', () => {
    const policy = new RestartPolicy(withDefaults({ maxFailures: 2, failureWindowMs: 1000 }));
    expect(policy.next(0)).toBe(500);
    expect(policy.next(5000)).toBe(500);
    expect(policy.next(5001)).toBeNull();
  });

  it('caps at maxDelayMs', () => {
    const policy = new RestartPolicy(withDefaults({ maxFailures: 100 }));
    const delays = Array.from({ length: 12 }, (_, i) => policy.next(i));
    expect(delays.at(-1)).toBe(30_000);
  });
});

describe('Limiter', () => {
  it('hands out slots in FIFO order and skips aborted waiters', async () => {
    const limiter = new Limiter(1);
    const order: string[] = [];
    await limiter.acquire();
    const controller = new AbortController();
    const a = limiter.acquire().then(() => order.push('a'));
    const b = limiter.acquire(controller.signal).then(
      () => order.push('b'),
      () => order.push('b aborted'),
    );
    const c = limiter.acquire().then(() => order.push('c'));
    expect(limiter.queued).toBe(3);
    controller.abort();
    await b;
    limiter.release();
    await a;
    limiter.release();
    await c;
    expect(order).toEqual(['b aborted', 'a', 'c']);
    expect(limiter.inFlight).toBe(1);
  });

  it('rejects all waiters', async () => {
    const limiter = new Limiter(1);
    await limiter.acquire();
    const waiting = limiter.acquire();
    limiter.rejectAll(new Error('stopped'));
    await expect(waiting).rejects.toThrow('stopped');
  });
});

describe('metrics', () => {
  it('computes nearest-rank percentiles and counts outcomes', () => {
    expect(percentile([], 50)).toBeNull();
    expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 50)).toBe(5);
    expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 95)).toBe(10);
    const stats = new CallStats();
    stats.record('ok', 1);
    stats.record('error', 2);
    stats.record('timeout', 3);
    expect(stats.snapshot()).toEqual({ calls: 3, errors: 2, timeouts: 1, p50Ms: 2, p95Ms: 3 });
  });
});

describe('ServerLog', () => {
  it('rotates at the size cap and keeps three generations', () => {
    const file = path.join(tmp(), 'logs', 's.log');
    const log = new ServerLog(file, 200);
    for (let i = 0; i < 40; i++) log.write('stderr', `line ${i} ${'x'.repeat(20)}`);
    expect(readFileSync(file, 'utf8').length).toBeLessThanOrEqual(200);
    expect(readFileSync(file, 'utf8')).toContain('line 39');
    expect(existsSync(`${file}.1`) && existsSync(`${file}.2`) && existsSync(`${file}.3`)).toBe(
      true,
    );
    expect(existsSync(`${file}.4`)).toBe(false);
  });
});

describe('safeEnvironment', () => {
  it('passes only the safe base variables plus the configured ones', () => {
    const env = safeEnvironment(
      { TOKEN: 't' },
      {
        PATH: '/bin',
        HOME: '/h',
        OPENAI_API_KEY: 'secret',
        LANG: 'C',
        LOGNAME: 'me',
        SHELL: '() { evil; }',
      },
    );
    expect(env).toEqual({ PATH: '/bin', HOME: '/h', LANG: 'C', TOKEN: 't' });
  });
});

describe('toWebSocketUrl', () => {
  it.each([
    ['http://h:1/mcp', 'ws://h:1/mcp'],
    ['https://h/mcp', 'wss://h/mcp'],
    ['ws://h/x', 'ws://h/x'],
  ])('%s → %s', (from, to) => expect(toWebSocketUrl(from).href).toBe(to));
});

describe('normalizeResult', () => {
  const options = { maxChars: 1000, outputsDir: '', label: 's__t' };
  it('keeps structured content and uses it as text when there is none', async () => {
    expect(await normalizeResult({ content: [], structuredContent: { a: 1 } }, options)).toEqual({
      ok: true,
      output: '{\n  "a": 1\n}',
      structured: { a: 1 },
    });
  });

  it('describes binary blocks and maps isError', async () => {
    const result = await normalizeResult(
      {
        content: [
          { type: 'text', text: 'bad input' },
          {
            type: 'resource',
            resource: { uri: 'x://b', mimeType: 'application/zip', blob: 'AAAA' },
          },
        ],
        isError: true,
      },
      options,
    );
    expect(result).toMatchObject({
      ok: false,
      error: { code: 'tool-error', message: 'bad input' },
    });
    expect(result.output).toBe('bad input\n[resource x://b (application/zip), 3 bytes]');
  });

  it('saves output over the cap', async () => {
    const dir = tmp();
    const result = await normalizeResult(
      { content: [{ type: 'text', text: 'y'.repeat(500) }] },
      { ...options, maxChars: 50, outputsDir: dir },
    );
    expect(result.ok && result.savedTo && readFileSync(result.savedTo, 'utf8')).toBe(
      'y'.repeat(500),
    );
    expect(
      result.output?.startsWith('y'.repeat(50) + '\n\n[output cut at 50 of 500 characters'),
    ).toBe(true);
    expect(result.content).toBeUndefined();
  });

  it('names the saved file as the tools do and says how to page through it', async () => {
    const dir = tmp();
    const result = await normalizeResult(
      { content: [{ type: 'text', text: 'z'.repeat(80) }] },
      { ...options, maxChars: 10, outputsDir: dir, label: 'srv__a/b c' },
    );
    if (!result.ok) throw new Error(result.error.message);
    expect(path.dirname(result.savedTo!)).toBe(dir);
    expect(path.basename(result.savedTo!)).toMatch(/^srv__a_b_c-\d{4}-.*-[0-9a-f]{6}\.txt$/);
    expect(result.output).toBe(
      `${'z'.repeat(10)}\n\n[output cut at 10 of 80 characters; the whole output is saved in ` +
        `${result.savedTo}; page it with read_file offset/limit]`,
    );
  });
});

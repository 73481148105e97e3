import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import {
  authorizationKey,
  definitionKey,
  negotiationFor,
  verdictOf,
  VerdictStore,
} from '../../../src/workers/mcp/negotiation.ts';
import type { McpServerSpec } from '../../../src/workers/protocol/mcp.ts';

const spec = (extra: Partial<McpServerSpec> = {}): McpServerSpec => ({
  name: 's',
  displayName: 's',
  transport: 'stdio',
  command: 'srv',
  args: ['--x'],
  timeoutMs: 1000,
  startupTimeoutMs: 3000,
  maxConcurrency: 1,
  autoStart: true,
  gate: 'startable',
  ...extra,
});
const discover = { supportedVersions: ['2026-07-28'], capabilities: {} };
const options = { probe: true, probeTimeoutMs: 1000, authorization: 'ctx-a' };
/** A modern verdict whose discover result may be reused for an hour, by anyone. */
const keptModern = (at = Date.now()) =>
  ({ era: 'modern', discover, at, freshUntil: at + 3_600_000 }) as const;

describe('protocol negotiation per server definition', () => {
  it('keys a definition by what decides which server answers, not by headers or timeouts', () => {
    const key = definitionKey(spec());
    expect(definitionKey(spec({ timeoutMs: 5, headers: { A: 'b' }, name: 'other' }))).toBe(key);
    expect(definitionKey(spec({ args: ['--y'] }))).not.toBe(key);
    expect(definitionKey(spec({ env: { A: '1' } }))).not.toBe(key);
  });

  it.each([
    ['legacy', undefined, { mode: undefined, prior: undefined, probes: false }],
    ['auto', undefined, { mode: { mode: 'auto' }, prior: undefined, probes: true }],
    ['auto', 'legacy', { mode: undefined, prior: undefined, probes: false }],
    ['auto', 'modern', { mode: { mode: 'auto' }, prior: { kind: 'modern' }, probes: false }],
    ['2026-07-28', undefined, { mode: { mode: { pin: '2026-07-28' } }, probes: true }],
    ['2026-07-28', 'modern', { prior: { kind: 'modern' }, probes: false }],
  ] as const)('protocol %s with a kept verdict %s', (protocol, kept, expected) => {
    const keptVerdict = () => keptModern();
    const store = new VerdictStore(undefined);
    const s = spec({ protocol });
    if (kept === 'legacy') store.set(definitionKey(s), { era: 'legacy', at: Date.now() });
    if (kept === 'modern') store.set(definitionKey(s), keptVerdict());
    expect(negotiationFor(s, store, options)).toMatchObject(expected);
  });

  it('does not probe where it would cost a spawn per command (no daemon), unless the era is known', () => {
    const store = new VerdictStore(undefined);
    expect(negotiationFor(spec(), store, { ...options, probe: false })).toMatchObject({
      mode: undefined,
      probes: false,
    });
    store.set(definitionKey(spec()), keptModern());
    expect(negotiationFor(spec(), store, { ...options, probe: false }).prior).toEqual({
      kind: 'modern',
      discover,
    });
  });

  it('keeps verdicts in a private file, read by the next daemon; old ones are probed again', () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'niffler-verdicts-')), 'mcp', 'p.json');
    const key = definitionKey(spec());
    new VerdictStore(file).set(key, { era: 'legacy', at: Date.now() });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(new VerdictStore(file).get(key)?.era).toBe('legacy');
    const eightDays = Date.now() + 8 * 24 * 3_600_000;
    expect(new VerdictStore(file).get(key, eightDays)).toBeUndefined();
    new VerdictStore(file).set(key, undefined);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({});
  });

  it('reuses a discover result only as its cache hints allow: while ttlMs lasts, and a private one in its own authorization context', () => {
    const store = new VerdictStore(undefined);
    const key = definitionKey(spec());
    const at = 1_000_000;
    const verdict = (discovered: object) =>
      verdictOf(
        {
          getProtocolEra: () => 'modern',
          getDiscoverResult: () => ({ ...discover, ...discovered }),
        } as unknown as Client,
        'ctx-a',
        at,
      )!;
    const plan = (authorization: string, now: number, probe = true) =>
      negotiationFor(spec(), store, { ...options, authorization, probe }, now);
    // public, 60 s: anyone's, for 60 s; then discovered anew (the era known: no probe's wait
    // where probing is not allowed).
    store.set(key, verdict({ ttlMs: 60_000, cacheScope: 'public' }));
    expect(plan('ctx-b', at + 59_000)).toMatchObject({ prior: { kind: 'modern' }, probes: false });
    expect(plan('ctx-a', at + 61_000)).toMatchObject({ prior: undefined, probes: true });
    expect(plan('ctx-a', at + 61_000, false)).toMatchObject({
      mode: { mode: { pin: '2026-07-28' } },
      probes: true,
    });
    // private (also what a result without a scope is): only in the context it was given in.
    store.set(key, verdict({ ttlMs: 60_000, cacheScope: 'private' }));
    expect(plan('ctx-a', at + 1_000)).toMatchObject({ prior: { kind: 'modern' } });
    expect(plan('ctx-b', at + 1_000)).toMatchObject({ prior: undefined, probes: true });
    store.set(key, verdict({ ttlMs: 60_000 }));
    expect(plan('ctx-b', at + 1_000).prior).toBeUndefined();
    // ttlMs 0 or absent: immediately stale; a ttlMs past a day is held to a day.
    store.set(key, verdict({ ttlMs: 0, cacheScope: 'public' }));
    expect(plan('ctx-a', at).prior).toBeUndefined();
    store.set(key, verdict({ cacheScope: 'public' }));
    expect(plan('ctx-a', at).prior).toBeUndefined();
    store.set(key, verdict({ ttlMs: 30 * 24 * 3_600_000, cacheScope: 'public' }));
    expect(plan('ctx-a', at + 23 * 3_600_000).prior).toBeDefined();
    expect(plan('ctx-a', at + 25 * 3_600_000).prior).toBeUndefined();
  });

  it('tells authorization contexts apart by headers and access token, not by header case or order', () => {
    const a = authorizationKey(spec({ headers: { Authorization: 'Bearer 1', X: 'y' } }), undefined);
    expect(
      authorizationKey(spec({ headers: { x: 'y', authorization: 'Bearer 1' } }), undefined),
    ).toBe(a);
    expect(
      authorizationKey(spec({ headers: { Authorization: 'Bearer 2', X: 'y' } }), undefined),
    ).not.toBe(a);
    const oauth = authorizationKey(spec(), 'token-1');
    expect(authorizationKey(spec(), 'token-2')).not.toBe(oauth);
    expect(authorizationKey(spec(), undefined)).not.toBe(oauth);
  });
});

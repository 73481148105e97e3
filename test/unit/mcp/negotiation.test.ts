import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  definitionKey,
  negotiationFor,
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
const options = { probe: true, probeTimeoutMs: 1000 };

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
    const store = new VerdictStore(undefined);
    const s = spec({ protocol });
    if (kept === 'legacy') store.set(definitionKey(s), { era: 'legacy', at: Date.now() });
    if (kept === 'modern') store.set(definitionKey(s), { era: 'modern', discover, at: Date.now() });
    expect(negotiationFor(s, store, options)).toMatchObject(expected);
  });

  it('does not probe where it would cost a spawn per command (no daemon), unless the era is known', () => {
    const store = new VerdictStore(undefined);
    expect(negotiationFor(spec(), store, { ...options, probe: false })).toMatchObject({
      mode: undefined,
      probes: false,
    });
    store.set(definitionKey(spec()), { era: 'modern', discover, at: Date.now() });
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
});

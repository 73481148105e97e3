import { describe, expect, it } from 'vitest';
import { MCP_SERVER_STATES } from '../../../src/workers/protocol/mcp.ts';
import { TRANSITIONS, transition } from '../../../src/workers/mcp/states.ts';

describe('the server lifecycle table', () => {
  it('has a row for every state of mcp status, and leads only to those states', () => {
    expect(Object.keys(TRANSITIONS).sort()).toEqual([...MCP_SERVER_STATES].sort());
    for (const row of Object.values(TRANSITIONS))
      for (const next of Object.values(row)) expect(MCP_SERVER_STATES).toContain(next);
  });

  it('reaches every state from stopped, and every state can be stopped or gated', () => {
    const seen = new Set<string>(['stopped']);
    for (let grew = true; grew;) {
      grew = false;
      for (const state of [...seen])
        for (const next of Object.values(TRANSITIONS[state as keyof typeof TRANSITIONS]))
          if (!seen.has(next)) grew = seen.add(next).size > 0;
    }
    expect([...seen].sort()).toEqual([...MCP_SERVER_STATES].sort());
    for (const state of MCP_SERVER_STATES) {
      expect(transition(state, 'stop')).toBe('stopped');
      expect(transition(state, 'disable')).toBe('disabled');
      expect(transition(state, 'distrust')).toBe('untrusted');
    }
  });

  it.each([
    ['stopped', 'start', 'starting'],
    ['starting', 'connected', 'ready'],
    ['starting', 'retry', 'starting'],
    ['ready', 'lost', 'degraded'],
    ['degraded', 'start', 'degraded'],
    ['degraded', 'connected', 'ready'],
    ['degraded', 'gave-up', 'failed'],
    ['failed', 'start', 'starting'],
    ['starting', 'needs-auth', 'needs-auth'],
    ['needs-auth', 'authorized', 'starting'],
    ['starting', 'refused', 'failed'],
  ] as const)('%s --%s--> %s', (from, event, to) => {
    expect(transition(from, event)).toBe(to);
  });

  it('has no move for what cannot happen (a ready server does not connect again)', () => {
    expect(transition('ready', 'connected')).toBeUndefined();
    expect(transition('stopped', 'lost')).toBeUndefined();
  });
});

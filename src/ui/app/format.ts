import { truncate } from '../render/format.ts';

/** Display name of a tool: `server__tool` shows as `tool` when its server is shown beside it. */
export const toolLabel = (name: string, server?: string): string =>
  server && name.startsWith(`${server}__`) ? name.slice(server.length + 2) : name;

const argValue = (value: unknown): string =>
  typeof value === 'string'
    ? JSON.stringify(truncate(value.replace(/\s+/g, ' '), 40))
    : truncate(JSON.stringify(value) ?? 'undefined', 40);

/** The key arguments of a call on one line: `path: "a.ts", limit: 20`, cut at `max`. */
export const formatArgs = (args: Record<string, unknown>, max = 80): string =>
  truncate(
    Object.entries(args)
      .map(([key, value]) => `${key}: ${argValue(value)}`)
      .join(', '),
    max,
  );

/** Time a tool call or turn has taken: `850ms`, `1.2s`, `2m05s` (uptimes use render/format.ts). */
export const formatElapsed = (ms: number): string => {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.floor(ms / 1000);
  return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
};

/** `950`, `1.2k`, `3.4M`. */
export const formatTokens = (n: number): string =>
  n < 1000 ? String(n) : n < 1_000_000 ? `${(n / 1000).toFixed(1)}k` : `${(n / 1e6).toFixed(1)}M`;

export const formatCost = (usd: number): string =>
  usd === 0 ? '$0' : usd < 0.01 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;

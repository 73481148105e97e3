import type { McpTraceEntry } from '../protocol/mcp.ts';

/**
 * One protocol trace entry as a line, `→ request tools/call #3 120 chars 4 ms {…}`: in a server's
 * log and in `niffler mcp logs NAME --trace`.
 */
export const formatTraceEntry = (e: McpTraceEntry): string =>
  [
    e.direction === 'out' ? '→' : '←',
    e.kind,
    e.method ?? '',
    e.id !== undefined ? `#${e.id}` : '',
    `${e.chars} chars`,
    e.ms !== undefined ? `${e.ms} ms` : '',
    e.body,
  ]
    .filter(Boolean)
    .join(' ');

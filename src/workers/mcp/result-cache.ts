import type { Tool } from '@modelcontextprotocol/client';
import type { McpCacheSpec } from '../protocol/mcp.ts';
import type { ToolResult } from '../protocol/tool-result.ts';

/** Results kept per server at most (the oldest go first). */
const MAX_ENTRIES = 500;

/** JSON with object keys sorted, so `{a, b}` and `{b, a}` are one key. */
const stableJson = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v,
  );

/**
 * How long a tool's results may be kept, in ms, under `mcpServers.X.cache`: only for tools the
 * server annotates both read-only and idempotent (a result that depends on nothing but its
 * arguments); `undefined` when not at all.
 */
export const cacheTtlMs = (
  spec: McpCacheSpec | undefined,
  tool: Tool | undefined,
): number | undefined => {
  if (!spec || !tool) return undefined;
  const { readOnlyHint, idempotentHint } = tool.annotations ?? {};
  if (readOnlyHint !== true || idempotentHint !== true) return undefined;
  const seconds = spec.tools?.[tool.name]?.ttlSeconds ?? spec.ttlSeconds;
  return seconds && seconds > 0 ? seconds * 1000 : undefined;
};

/**
 * Successful tool results of one server by tool and arguments, each for its time to live.
 * Emptied when the tools change, the server restarts or the workspace changes.
 */
export class ResultCache {
  private hits = 0;
  private misses = 0;
  private readonly entries = new Map<string, { result: ToolResult; expiresAt: number }>();

  get(tool: string, args: Record<string, unknown>, now = Date.now()): ToolResult | undefined {
    const key = `${tool}\u0000${stableJson(args)}`;
    const entry = this.entries.get(key);
    if (entry && entry.expiresAt > now) {
      this.hits++;
      return entry.result;
    }
    if (entry) this.entries.delete(key);
    this.misses++;
    return undefined;
  }

  set(tool: string, args: Record<string, unknown>, result: ToolResult, ttlMs: number): void {
    if (!result.ok) return;
    const key = `${tool}\u0000${stableJson(args)}`;
    this.entries.delete(key);
    this.entries.set(key, { result, expiresAt: Date.now() + ttlMs });
    if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
  }

  clear(): void {
    this.entries.clear();
  }

  stats(): { hits: number; misses: number; entries: number } {
    return { hits: this.hits, misses: this.misses, entries: this.entries.size };
  }
}

import { createHash } from 'node:crypto';
import type {
  Client,
  DiscoverResult,
  PriorDiscovery,
  VersionNegotiationOptions,
} from '@modelcontextprotocol/client';
import { MODERN_REVISION, type McpServerSpec } from '../protocol/mcp.ts';
import { readStateFile, withStateLock, writeStateFile } from '../shared/state-file.ts';

/** How long a verdict is trusted before the server is probed again. */
const VERDICT_TTL_MS = { legacy: 7 * 24 * 3_600_000, modern: 24 * 3_600_000 };
/** Verdicts kept at most (the oldest go first). */
const MAX_VERDICTS = 500;

/**
 * What a connect found a server to speak, kept per server definition. A modern verdict keeps the
 * server's `server/discover` result too, which a later connect adopts instead of asking again —
 * only as the result's cache hints allow (SEP-2549): until `freshUntil` (`ttlMs` after it came;
 * absent or 0: never), and for a `private` result (the default) only in the authorization context
 * it was given in (`partition`). Past either, the era is still known: the connect discovers anew
 * without probing.
 */
type Verdict =
  | {
      era: 'modern';
      discover: DiscoverResult;
      at: number;
      freshUntil?: number;
      partition?: string;
    }
  | { era: 'legacy'; at: number };

/** How one connection attempt negotiates: the client's option and what `connect` is given. */
export interface Negotiation {
  /** The verdict store's key of this definition. */
  key: string;
  /** `versionNegotiation` of the attempt's `Client`; absent: the plain 2025 handshake. */
  mode: VersionNegotiationOptions | undefined;
  /** A cached verdict, so the attempt does not probe. */
  prior: PriorDiscovery | undefined;
  /** True when the attempt probes: what it finds becomes the definition's verdict. */
  probes: boolean;
}

/**
 * The key of a server definition: what decides which program or endpoint answers (a changed
 * command, argument, environment or URL may be another server; headers and timeouts are not).
 */
export const definitionKey = (spec: McpServerSpec): string =>
  createHash('sha256')
    .update(
      JSON.stringify([
        spec.transport,
        spec.command ?? null,
        spec.args ?? [],
        Object.entries(spec.env ?? {}).sort(([a], [b]) => (a < b ? -1 : 1)),
        spec.workingDir ?? null,
        spec.url ?? null,
      ]),
    )
    .digest('hex')
    .slice(0, 32);

/**
 * The authorization context a connection to `spec` runs in, as a key: its configured headers and
 * the OAuth access token it presents (null where it has none). A `private` result is reused only
 * under the same key: another token, perhaps another account, discovers anew.
 */
export const authorizationKey = (spec: McpServerSpec, accessToken: string | undefined): string =>
  createHash('sha256')
    .update(
      JSON.stringify([
        Object.entries(spec.headers ?? {})
          .map(([name, value]) => [name.toLowerCase(), value])
          .sort(([a], [b]) => (a! < b! ? -1 : 1)),
        accessToken ?? null,
      ]),
    )
    .digest('hex')
    .slice(0, 32);

/**
 * Era verdicts per server definition, in `$NIFFLER_HOME/mcp/protocols.json` (0600, written whole
 * under a lock) so that neither a restart of the server nor of the daemon probes again; in memory
 * when no file is given. A file that cannot be read is treated as empty.
 */
export class VerdictStore {
  private cache: Record<string, Verdict> | undefined;

  constructor(private readonly file: string | undefined) {}

  get(key: string, now = Date.now()): Verdict | undefined {
    const verdict = this.read()[key];
    if (!verdict || now - verdict.at > VERDICT_TTL_MS[verdict.era]) return undefined;
    return verdict;
  }

  set(key: string, verdict: Verdict | undefined): void {
    const update = (all: Record<string, Verdict>) => {
      if (verdict) all[key] = verdict;
      else delete all[key];
      const kept = Object.entries(all)
        .sort(([, a], [, b]) => b.at - a.at)
        .slice(0, MAX_VERDICTS);
      return Object.fromEntries(kept);
    };
    if (!this.file) {
      this.cache = update({ ...this.read() });
      return;
    }
    const file = this.file;
    try {
      withStateLock(file, () => {
        this.cache = update(this.load());
        writeStateFile(file, JSON.stringify(this.cache));
      });
    } catch {
      // A verdict that cannot be saved only costs a probe next time.
      this.cache = update({ ...this.read() });
    }
  }

  private read(): Record<string, Verdict> {
    this.cache ??= this.load();
    return this.cache;
  }

  private load(): Record<string, Verdict> {
    if (!this.file) return {};
    const read = readStateFile(this.file);
    if (read.kind !== 'text') return {};
    try {
      const parsed = JSON.parse(read.text) as unknown;
      return parsed && typeof parsed === 'object' ? (parsed as Record<string, Verdict>) : {};
    } catch {
      return {};
    }
  }
}

/**
 * How an attempt for `spec` negotiates. `legacy`: the 2025 `initialize`, no probe. `2026-07-28`:
 * that revision or nothing. `auto`: a cached verdict when there is one; else a `server/discover`
 * probe that falls back to `initialize`, where probing is allowed (a daemon that keeps the server
 * warm), or the plain 2025 handshake where it is not (a spawn per command).
 */
export const negotiationFor = (
  spec: McpServerSpec,
  store: VerdictStore,
  options: { probe: boolean; probeTimeoutMs: number; authorization: string },
  now = Date.now(),
): Negotiation => {
  const key = definitionKey(spec);
  const setting = spec.protocol ?? 'auto';
  if (setting === 'legacy') return { key, mode: undefined, prior: undefined, probes: false };
  const verdict = store.get(key, now);
  const probe = { timeoutMs: options.probeTimeoutMs, maxRetries: 0 };
  const pinned: VersionNegotiationOptions = { mode: { pin: MODERN_REVISION }, probe };
  if (verdict?.era === 'modern') {
    const mode: VersionNegotiationOptions =
      setting === MODERN_REVISION ? pinned : { mode: 'auto', probe };
    if (adoptable(verdict, options.authorization, now))
      return { key, mode, prior: { kind: 'modern', discover: verdict.discover }, probes: false };
    // Its discover result may not be reused: asked again, of a server known to speak 2026-07-28
    // (no probe's wait where probing is not allowed), and kept anew.
    return { key, mode: options.probe ? mode : pinned, prior: undefined, probes: true };
  }
  if (setting === MODERN_REVISION) return { key, mode: pinned, prior: undefined, probes: true };
  if (verdict?.era === 'legacy' || !options.probe)
    return { key, mode: undefined, prior: undefined, probes: false };
  return { key, mode: { mode: 'auto', probe }, prior: undefined, probes: true };
};

/** Whether a kept discover result may stand in for asking: fresh, and for this context if private. */
const adoptable = (
  verdict: Extract<Verdict, { era: 'modern' }>,
  authorization: string,
  now: number,
): boolean =>
  verdict.freshUntil !== undefined &&
  now < verdict.freshUntil &&
  (verdict.partition === undefined || verdict.partition === authorization);

/**
 * The verdict a connected client stands for, in the authorization context `authorization`: a
 * modern one with its discover result's freshness (`ttlMs`, at most a day) and, unless the server
 * marked it `public`, that context.
 */
export const verdictOf = (
  client: Client,
  authorization: string,
  now = Date.now(),
): Verdict | undefined => {
  if (client.getProtocolEra() === 'legacy') return { era: 'legacy', at: now };
  const discover = client.getDiscoverResult();
  if (!discover) return undefined;
  const { ttlMs, cacheScope } = discover as { ttlMs?: unknown; cacheScope?: unknown };
  const ttl =
    typeof ttlMs === 'number' && ttlMs > 0 ? Math.min(ttlMs, VERDICT_TTL_MS.modern) : undefined;
  return {
    era: 'modern',
    discover,
    at: now,
    ...(ttl !== undefined ? { freshUntil: now + ttl } : {}),
    ...(cacheScope === 'public' ? {} : { partition: authorization }),
  };
};

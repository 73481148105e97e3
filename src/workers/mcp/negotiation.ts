import { createHash } from 'node:crypto';
import type {
  Client,
  DiscoverResult,
  PriorDiscovery,
  VersionNegotiationOptions,
} from '@modelcontextprotocol/client';
import type { McpServerSpec } from '../protocol/mcp.ts';
import { readStateFile, withStateLock, writeStateFile } from '../shared/state-file.ts';

/** The revision of the stateless era that niffler speaks. */
export const MODERN_REVISION = '2026-07-28';

/** How long a verdict is trusted before the server is probed again. */
const VERDICT_TTL_MS = { legacy: 7 * 24 * 3_600_000, modern: 24 * 3_600_000 };
/** Verdicts kept at most (the oldest go first). */
const MAX_VERDICTS = 500;

/** What a connect found a server to speak, kept per server definition. */
export type Verdict =
  { era: 'modern'; discover: DiscoverResult; at: number } | { era: 'legacy'; at: number };

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
  options: { probe: boolean; probeTimeoutMs: number },
): Negotiation => {
  const key = definitionKey(spec);
  const setting = spec.protocol ?? 'auto';
  if (setting === 'legacy') return { key, mode: undefined, prior: undefined, probes: false };
  const verdict = store.get(key);
  const probe = { timeoutMs: options.probeTimeoutMs, maxRetries: 0 };
  if (setting === MODERN_REVISION) {
    const mode: VersionNegotiationOptions = { mode: { pin: MODERN_REVISION }, probe };
    if (verdict?.era === 'modern')
      return { key, mode, prior: { kind: 'modern', discover: verdict.discover }, probes: false };
    return { key, mode, prior: undefined, probes: true };
  }
  if (verdict?.era === 'modern')
    return {
      key,
      mode: { mode: 'auto', probe },
      prior: { kind: 'modern', discover: verdict.discover },
      probes: false,
    };
  if (verdict?.era === 'legacy' || !options.probe)
    return { key, mode: undefined, prior: undefined, probes: false };
  return { key, mode: { mode: 'auto', probe }, prior: undefined, probes: true };
};

/** The verdict a connected client stands for. */
export const verdictOf = (client: Client, now = Date.now()): Verdict | undefined => {
  if (client.getProtocolEra() === 'legacy') return { era: 'legacy', at: now };
  const discover = client.getDiscoverResult();
  return discover ? { era: 'modern', discover, at: now } : undefined;
};

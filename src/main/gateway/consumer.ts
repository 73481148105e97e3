import type { Server } from '@modelcontextprotocol/server';
import type { GatewayConsumerStatus } from '../protocol.ts';

let nextId = 1;

/**
 * One MCP client of the gateway: a stdio front-end, an HTTP session (2025), or a 2026-07-28 client
 * over HTTP known by its name. Holds what `mcp status` shows of it and its live SDK `Server`
 * instances (to tell them of list changes and servers' log messages).
 */
export class Consumer {
  readonly id = nextId++;
  readonly connectedAt = Date.now();
  lastSeenAt = this.connectedAt;
  name = 'unknown';
  version: string | null = null;
  revision: string | null = null;
  calls = 0;
  errors = 0;
  inFlight = 0;
  readonly instances = new Set<Server>();

  constructor(
    readonly transport: 'stdio' | 'http',
    /** Serve only this server, under its tools' own names (`mcp serve --server NAME`). */
    readonly scope: string | undefined,
  ) {}

  /** What the client said of itself (`clientInfo`, the revision), on each request it sends. */
  identify(info: { name?: string; version?: string } | undefined, revision: string | undefined) {
    this.lastSeenAt = Date.now();
    if (info?.name) this.name = info.name;
    if (info?.version) this.version = info.version;
    if (revision) this.revision = revision;
  }

  status(): GatewayConsumerStatus {
    return {
      id: this.id,
      name: this.name,
      version: this.version,
      transport: this.transport,
      revision: this.revision,
      server: this.scope ?? null,
      connectedAt: this.connectedAt,
      lastSeenAt: this.lastSeenAt,
      calls: this.calls,
      errors: this.errors,
      inFlight: this.inFlight,
    };
  }
}

import type { McpEvent } from '../../workers/protocol/mcp.ts';

// The MCP host's tools version, and what the live catalogs that replaced kept ones changed: a
// turn that offered the kept tools tells its user (McpHost.keptRevisionsSince).

type Kept = NonNullable<Extract<McpEvent, { type: 'tools-changed' }>['kept']>;

export class KeptRevisions {
  #version = 0;
  /** What the live catalogs that replaced kept ones changed, by the tools version they came at. */
  readonly #revisions: { version: number; text: string }[] = [];

  /** Goes up whenever a server's tools change: a list taken at one version holds until the next. */
  get version(): number {
    return this.#version;
  }

  /** A server's tools changed; `kept` when they replaced the ones kept from its last run. */
  changed(server: string, kept: Kept | undefined): void {
    this.#version++;
    if (kept) this.#note(server, kept);
  }

  /** The notices that came after `version` (all of them without one). */
  since(version: number | undefined): string[] {
    return this.#revisions
      .filter((r) => version === undefined || r.version > version)
      .map((r) => r.text);
  }

  #note(server: string, kept: Kept): void {
    const words = [
      kept.added.length ? `new: ${kept.added.join(', ')}` : '',
      kept.removed.length ? `gone: ${kept.removed.join(', ')}` : '',
      kept.changed.length ? `changed: ${kept.changed.join(', ')}` : '',
    ].filter(Boolean);
    this.#revisions.push({
      version: this.#version,
      text: `server "${server}" is ready, and its tools changed since the last run (${words.join('; ')}): the next request has them as they are now`,
    });
    // A few per server start; the oldest go (a turn asks only for those since it began).
    if (this.#revisions.length > 32) this.#revisions.shift();
  }
}

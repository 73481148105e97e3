import path from 'node:path';
import type { MessagePort } from 'node:worker_threads';
import type {
  McpEvent,
  McpRequest,
  McpServerSpec,
  McpServerStatus,
  McpWorkerData,
} from '../protocol/mcp.ts';
import { EMPTY_CATALOG } from './catalog.ts';
import type { Catalog } from './catalog-types.ts';
import type { KeptCatalog, KeptCatalogs } from './kept-catalog.ts';
import { logFileName } from './logs.ts';
import { promptsOf, resourcesOf, templatesOf, toolsOf } from './listing.ts';
import { assignToolNames } from './naming.ts';

// While the MCP worker loads its client code (the SDK: a few hundred ms on a cold start, with the
// servers booting beside it), the engine need not wait: what a first request needs of it — the
// servers' states and the tools, prompts and resources they offer — comes from the catalogs kept
// from their last run (kept-catalog.ts). This answers those requests from them, as the manager
// will once loaded (same names, same shapes), and holds every other request back for it, in
// order. It loads none of the client code.

/** The requests answered before the client code has loaded. */
type Early = Extract<
  McpRequest,
  { type: 'status' | 'list-tools' | 'list-prompts' | 'list-resources' | 'list-resource-templates' }
>;

const isEarly = (request: McpRequest): request is Early =>
  request.type === 'status' ||
  request.type === 'list-tools' ||
  request.type === 'list-prompts' ||
  request.type === 'list-resources' ||
  request.type === 'list-resource-templates';

/** A server as it stands before the manager has started anything: its gate, its kept catalog. */
interface Server {
  spec: McpServerSpec;
  kept: KeptCatalog | undefined;
  name: string;
  catalog: Catalog;
}

/** The state the manager puts a server in at once: starting, unless gated or started by hand. */
const firstState = (spec: McpServerSpec): McpServerStatus['state'] =>
  spec.gate === 'disabled'
    ? 'disabled'
    : spec.gate === 'untrusted'
      ? 'untrusted'
      : spec.autoStart
        ? 'starting'
        : 'stopped';

const statusOf = ({ spec, kept, catalog }: Server, logsDir: string): McpServerStatus => ({
  name: spec.name,
  displayName: spec.displayName,
  transport: spec.transport,
  state: firstState(spec),
  pid: null,
  startedAt: null,
  restarts: 0,
  lastError: null,
  nextRestartAt: null,
  inFlight: 0,
  queued: 0,
  tools: catalog.tools.length,
  prompts: catalog.prompts.length,
  resources: catalog.resources.length,
  serverInfo: kept?.serverInfo ?? null,
  instructions: kept?.instructions ?? null,
  catalog: kept ? 'kept' : 'none',
  protocolVersion: null,
  problems: [],
  cache: { hits: 0, misses: 0, entries: 0 },
  calls: 0,
  errors: 0,
  timeouts: 0,
  p50Ms: null,
  p95Ms: null,
  toolMetrics: {},
  logFile: path.join(logsDir, logFileName(spec.name)),
});

/**
 * Answers the engine's first requests from the kept catalogs until `handOver` (see above). The
 * servers that start by themselves offer their kept catalogs, exactly as `McpManager` does.
 */
export class EarlyAnswers {
  readonly #servers: Server[];
  readonly #held: McpRequest[] = [];
  readonly #listener = (request: McpRequest) => this.#receive(request);
  /** Resolves `released`: main asked for the client code, or a request needs it. */
  #release: () => void = () => {};
  readonly #released = new Promise<void>((resolve) => (this.#release = resolve));

  constructor(
    private readonly port: MessagePort,
    private readonly data: McpWorkerData,
    kept: KeptCatalogs,
  ) {
    this.#servers = data.servers.map((spec) => {
      const adopted = spec.gate === 'startable' && spec.autoStart ? kept.read(spec) : undefined;
      return {
        spec,
        kept: adopted,
        name: spec.name,
        catalog: adopted?.catalog ?? EMPTY_CATALOG,
      };
    });
  }

  /**
   * Starts answering, tells main the worker is ready for its requests with every server's state
   * (main answers `status` from them while the client code loads and holds this thread), and the
   * state of each server that starts by itself, as the manager will (what main knows without
   * asking: the instructions of the system prompt, say).
   */
  listen(): void {
    this.port.on('message', this.#listener);
    const statuses = this.#servers.map((server) => statusOf(server, this.data.logsDir));
    this.#post({ type: 'ready', statuses });
    for (const server of this.#servers)
      if (firstState(server.spec) === 'starting')
        this.#post({ type: 'status', status: statusOf(server, this.data.logsDir) });
  }

  /** Whether every server that starts by itself offers a kept catalog (none starting: false). */
  get allKept(): boolean {
    const starting = this.#servers.filter((s) => firstState(s.spec) === 'starting');
    return starting.length > 0 && starting.every((s) => s.kept);
  }

  /**
   * Resolves once the client code is wanted: main says so (`load-client`, sent once the first
   * request has gone), a request needs it (a call, a start…), or after `fallbackMs`.
   */
  released(fallbackMs: number): Promise<void> {
    const timer = setTimeout(this.#release, fallbackMs);
    return this.#released.finally(() => clearTimeout(timer));
  }

  /** Stops answering; returns the requests held back, in the order they came. */
  handOver(): McpRequest[] {
    this.port.off('message', this.#listener);
    return this.#held.splice(0);
  }

  readonly #post = (event: McpEvent): void => this.port.postMessage(event);

  #receive(request: McpRequest): void {
    if (request.type === 'load-client') return this.#release();
    if (request.type === 'collect-garbage') return;
    if (!isEarly(request)) {
      this.#held.push(request);
      this.#release();
      return;
    }
    this.#post({ type: 'result', id: request.id, value: this.#answer(request) });
  }

  #answer(request: Early): unknown {
    const servers = this.#servers;
    switch (request.type) {
      case 'status':
        return servers.map((server) => statusOf(server, this.data.logsDir));
      case 'list-tools': {
        const names = assignToolNames(
          servers.flatMap((s) => s.catalog.tools.map((t) => ({ server: s.name, tool: t.name }))),
        );
        return servers.flatMap((server) => toolsOf(server, names));
      }
      case 'list-prompts':
        return servers.flatMap(promptsOf);
      case 'list-resources':
        return servers.flatMap(resourcesOf);
      case 'list-resource-templates':
        return servers.flatMap(templatesOf);
    }
  }
}

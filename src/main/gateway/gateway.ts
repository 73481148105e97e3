import type { Server } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import type { McpLogLevel } from '../../workers/protocol/mcp.ts';
import type { AttachedClient, GatewayConsumerStatus } from '../protocol.ts';
import { GatewayCatalog, type CatalogSource } from './catalog.ts';
import { Consumer } from './consumer.ts';
import type { GatewayDeps } from './deps.ts';
import { Exchanges } from './exchange.ts';
import { HttpListener, type ListenOptions } from './http.ts';
import { RelayTransport } from './relay.ts';
import { gatewayServer } from './server.ts';

/** What the gateway is built from: the engine's parts, and a switch for servers' log messages. */
export type GatewayHost = Omit<GatewayDeps, 'catalog' | 'exchanges'> & {
  source: CatalogSource;
  setLogForwarding(on: boolean): Promise<unknown>;
};

/** A consumer and how to end it. */
interface Entry {
  consumer: Consumer;
  owner: AttachedClient;
  close: () => Promise<void>;
  /** Stdio consumers: where the front-end's text goes. */
  relay?: RelayTransport;
}

/**
 * The gateway (`niffler mcp serve`): the daemon's warm catalog served to other MCP clients as one
 * MCP server, over a front-end's stdio or Streamable HTTP. Consumers come and go with the
 * front-ends that own them; list changes and servers' log messages reach them all.
 */
export class Gateway {
  readonly #entries = new Map<number, Entry>();
  readonly #listeners = new Map<HttpListener, AttachedClient>();
  readonly #deps: GatewayDeps;
  #pendingChange: Set<'tools' | 'prompts' | 'resources'> | undefined;
  /** Servers ready when last heard of: a server coming or going changes what is served. */
  readonly #ready = new Set<string>();

  constructor(private readonly host: GatewayHost) {
    this.#deps = {
      ...host,
      catalog: new GatewayCatalog(host.source),
      exchanges: new Exchanges(),
    };
  }

  /** Opens a stdio consumer for `owner`, a front-end relaying its pipes; returns its id. */
  openStdio(owner: AttachedClient, scope: string | undefined): number {
    const consumer = new Consumer('stdio', scope);
    const relay = new RelayTransport((message) =>
      owner.notify('gateway/message', { consumer: consumer.id, message }),
    );
    const factory = gatewayServer(this.#deps, () => consumer, 'stdio', scope);
    const handle = serveStdio(this.#tracked(consumer, factory), {
      transport: relay,
      onerror: (error) => this.host.log.debug('gateway consumer error', { error: error.message }),
    });
    this.#add({ consumer, owner, relay, close: () => handle.close() });
    return consumer.id;
  }

  /**
   * Serves the gateway over Streamable HTTP for as long as `owner` (the front-end that asked)
   * stays; its consumers are owned by it too.
   */
  async listen(owner: AttachedClient, options: ListenOptions): Promise<HttpListener> {
    const listener = await HttpListener.start(
      {
        deps: this.#deps,
        register: (consumer, close) => this.#add({ consumer, owner, close }),
        end: (id, reason) => this.#end(id, reason),
      },
      options,
    );
    this.#listeners.set(listener, owner);
    this.host.log.info('gateway listening', { url: listener.url });
    return listener;
  }

  /** One message from a stdio consumer (text, as sent); one of another front-end is ignored. */
  receive(owner: AttachedClient, consumer: number, text: string): void {
    const entry = this.#entries.get(consumer);
    if (entry?.owner === owner) entry.relay?.receive(text);
  }

  /** A factory whose servers join `consumer`'s instances (for list changes and log messages). */
  #tracked(consumer: Consumer, factory: () => Server): () => Server {
    return () => {
      const server = factory();
      consumer.instances.add(server);
      return server;
    };
  }

  #add(entry: Entry): void {
    if (this.#entries.size === 0) void this.host.setLogForwarding(true).catch(() => {});
    this.#entries.set(entry.consumer.id, entry);
    this.host.log.info('gateway consumer connected', {
      id: entry.consumer.id,
      transport: entry.consumer.transport,
      ...(entry.consumer.scope ? { server: entry.consumer.scope } : {}),
    });
  }

  /** Ends one consumer: its in-flight requests are aborted (their backing calls cancelled). */
  async #end(id: number, reason: string): Promise<void> {
    const entry = this.#entries.get(id);
    if (!entry) return;
    this.#entries.delete(id);
    if (this.#entries.size === 0) void this.host.setLogForwarding(false).catch(() => {});
    const { consumer } = entry;
    await entry.close().catch(() => {});
    for (const server of consumer.instances) await server.close().catch(() => {});
    consumer.instances.clear();
    this.host.log.info('gateway consumer disconnected', {
      id,
      name: consumer.name,
      calls: consumer.calls,
      errors: consumer.errors,
      reason,
    });
  }

  /** The front-end `owner` went away: its consumers end with it. */
  async detach(owner: AttachedClient): Promise<void> {
    const listeners = [...this.#listeners].filter(([, o]) => o === owner).map(([l]) => l);
    for (const listener of listeners) this.#listeners.delete(listener);
    await Promise.all(listeners.map((l) => l.close().catch(() => {})));
    const mine = [...this.#entries.values()].filter((e) => e.owner === owner);
    await Promise.all(mine.map((e) => this.#end(e.consumer.id, 'its front-end went away')));
    for (const listener of listeners)
      this.host.log.info('gateway stopped listening', { url: listener.url });
  }

  statuses(): GatewayConsumerStatus[] {
    return [...this.#entries.values()].map((e) => e.consumer.status());
  }

  /**
   * Something consumers list changed (a server's tools, its state, the config): the catalog is
   * listed anew and every consumer told, once per burst.
   */
  changed(what: 'tools' | 'prompts' | 'resources' | 'all'): void {
    this.#deps.catalog.invalidate();
    const parts = what === 'all' ? (['tools', 'prompts', 'resources'] as const) : [what];
    if (this.#pendingChange) return void parts.forEach((p) => this.#pendingChange!.add(p));
    this.#pendingChange = new Set(parts);
    setImmediate(() => {
      const pending = this.#pendingChange!;
      this.#pendingChange = undefined;
      for (const { consumer } of this.#entries.values())
        for (const server of consumer.instances) notifyChanged(server, pending, consumer);
      for (const listener of this.#listeners.keys()) listener.changed(pending);
    });
  }

  /** A server's status: when it becomes ready, or stops being so, its tools come or go. */
  serverStatus(server: string, ready: boolean): void {
    if (this.#ready.has(server) === ready) return;
    if (ready) this.#ready.add(server);
    else this.#ready.delete(server);
    this.changed('all');
  }

  /** A backing server's log message, for every consumer (under the server's name). */
  serverLog(server: string, level: McpLogLevel, logger: string | undefined, data: unknown): void {
    const params = {
      level: level,
      logger: logger ? `${server}/${logger}` : server,
      data,
    };
    for (const { consumer } of this.#entries.values())
      for (const instance of consumer.instances)
        instance.sendLoggingMessage(params).catch(() => consumer.instances.delete(instance));
  }

  /** Ends every consumer and waiting exchange (the daemon stops). */
  async close(): Promise<void> {
    this.#deps.exchanges.close();
    const owners = new Set([
      ...this.#listeners.values(),
      ...[...this.#entries.values()].map((e) => e.owner),
    ]);
    await Promise.all([...owners].map((owner) => this.detach(owner)));
  }
}

/** Tells one live server instance what changed; a closed one leaves its consumer's set. */
const notifyChanged = (server: Server, parts: Set<string>, consumer: Consumer): void => {
  const gone = () => consumer.instances.delete(server);
  if (parts.has('tools')) server.sendToolListChanged().catch(gone);
  if (parts.has('prompts')) server.sendPromptListChanged().catch(gone);
  if (parts.has('resources')) server.sendResourceListChanged().catch(gone);
};

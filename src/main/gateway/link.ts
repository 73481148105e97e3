import { fail } from '../../workers/protocol/tool-result.ts';
import { NifflerError } from '../errors.ts';
import type { CommandRunner } from '../extensions/expand.ts';
import { usableExtensions } from '../extensions/load.ts';
import { notTrustedNow, runRepoTool } from '../extensions/repo-tools.ts';
import type { ServedRepoTool } from './catalog.ts';
import type { Gateway } from './gateway.ts';
import { isLoopbackHost } from './token.ts';
import type {
  AttachedClient,
  GatewayConsumerStatus,
  ParamsOf,
  RequestContext,
  ResultOf,
} from '../protocol.ts';
import type { McpHostEvent } from '../threads/mcp-types.ts';
import type { GatewayLinkDeps, GatewayPort } from '../engine/gateway-port.ts';
import { knownServer } from '../engine/mcp-handlers.ts';
import { serversSettled } from '../engine/server-waits.ts';

/**
 * The engine's side of the gateway (`niffler mcp serve`): made when its first consumer comes —
 * its code (the SDK's server among it) is loaded then, not by every daemon (a few MiB it would
 * keep all day) — told of the MCP worker's events, and its two requests.
 */
export class GatewayLink implements GatewayPort {
  #gateway: Gateway | undefined;

  constructor(private readonly deps: GatewayLinkDeps) {}

  async #now(): Promise<Gateway> {
    if (this.#gateway) return this.#gateway;
    const { Gateway } = await import('./gateway.ts');
    const { deps } = this;
    this.#gateway ??= new Gateway({
      root: deps.root(),
      loaded: () => deps.current(),
      approvals: deps.approvals(),
      tools: {
        definitions: () => deps.tools().definitions(),
        run: (c, s, p) => deps.tools().run(c, s, p),
      },
      runCommand: (spec, signal) => deps.tools().runCommand(spec, signal),
      mcp: deps.mcp(),
      log: deps.log().child({ scope: 'gateway' }),
      source: {
        loaded: () => deps.current(),
        definitions: () => deps.tools().definitions(),
        repoTools: () => this.#servedRepoTools(),
        listTools: () => deps.mcp().listTools(),
        listPrompts: () => deps.mcp().listPrompts(),
        listResources: () => deps.mcp().listResources(),
        listResourceTemplates: () => deps.mcp().listResourceTemplates(),
      },
      setLogForwarding: (on) => deps.mcp().setLogForwarding(on),
      settled: (signal, servers) =>
        serversSettled(deps.engine(), servers, signal, deps.engine().config.mcp.startupWait * 1000),
    });
    return this.#gateway;
  }

  /**
   * The repository tools the gateway serves: those a session may use (none of an untrusted
   * repository's), less what `tools.disabled` names (`repo`: all of them).
   */
  #servedRepoTools(): ServedRepoTool[] {
    const { deps } = this;
    const loaded = deps.current();
    if (!loaded) return [];
    const disabled = new Set(loaded.config.tools.disabled);
    if (disabled.has('repo')) return [];
    const run: CommandRunner = (spec, signal) => deps.tools().runCommand(spec, signal);
    return usableExtensions(loaded)
      .extensions.tools.filter((tool) => !disabled.has(tool.name))
      .map((tool) => ({
        name: tool.name,
        description: tool.description,
        inputSchema: tool.parameters,
        readOnly: tool.annotations.readOnlyHint === true,
        destructive: tool.annotations.destructiveHint === true,
        openWorld: tool.annotations.openWorldHint === true,
        run: (args, signal) => {
          // As the config has it when the call runs: a script it runs may have changed since.
          const now = deps.current();
          const same =
            now && usableExtensions(now).extensions.tools.find((t) => t.name === tool.name);
          return same?.command === tool.command
            ? runRepoTool(same, run, deps.root(), args, signal)
            : Promise.resolve(fail('denied', notTrustedNow(tool)));
        },
      }));
  }

  /** The gateway's consumers now (none before the first came). */
  consumers(): GatewayConsumerStatus[] {
    return this.#gateway?.statuses() ?? [];
  }

  /** A front-end's message to one of its stdio consumers. */
  receive(client: AttachedClient, consumer: number, message: string): void {
    this.#gateway?.receive(client, consumer, message);
  }

  /** A front-end went: the consumers it owned end. */
  detach(client: AttachedClient): void {
    void this.#gateway?.detach(client);
  }

  /** The config changed: everything served may have. */
  changed(): void {
    this.#gateway?.changed('all');
  }

  close(): Promise<void> | undefined {
    return this.#gateway?.close();
  }

  /** What the gateway's consumers must hear of the MCP worker's events. */
  tell(event: McpHostEvent): void {
    const gateway = this.#gateway;
    if (!gateway) return;
    switch (event.type) {
      case 'status':
        return gateway.serverStatus(event.status.name, event.status.state === 'ready');
      case 'tools-changed':
        return gateway.changed('tools');
      case 'prompts-changed':
        return gateway.changed('prompts');
      case 'resources-changed':
        return gateway.changed('resources');
      case 'server-log':
        return gateway.serverLog(event.server, event.level, event.logger, event.data);
      case 'worker-exit':
        return gateway.changed('all');
    }
  }

  /** `gateway/open`: a stdio consumer for this front-end. */
  async open(
    { server }: ParamsOf<'gateway/open'>,
    { client }: RequestContext,
  ): Promise<ResultOf<'gateway/open'>> {
    const scope = server ? knownServer(this.deps.engine(), server).name : undefined;
    return { consumer: (await this.#now()).openStdio(client, scope) };
  }

  /** `gateway/listen`: an HTTP listener (loopback unless `remote`). */
  async listen(
    { host, port, tokenSha256, server, remote }: ParamsOf<'gateway/listen'>,
    { client }: RequestContext,
  ): Promise<ResultOf<'gateway/listen'>> {
    if (!remote && !isLoopbackHost(host))
      throw new NifflerError(
        'usage',
        `${host} is not a loopback address; binding it needs --allow-remote (see niffler mcp serve --help)`,
      );
    const scope = server ? knownServer(this.deps.engine(), server).name : undefined;
    const gateway = await this.#now();
    const listener = await gateway.listen(client, {
      host,
      port,
      tokenSha256,
      ...(scope ? { scope } : {}),
    });
    return { url: listener.url, host, port: listener.port };
  }
}

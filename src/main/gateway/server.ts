import path from 'node:path';
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  ProtocolError,
  Server,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { McpForwardMethod } from '../../workers/protocol/mcp.ts';
import { clientProfile } from '../engine/capabilities.ts';
import { VERSION } from '../version.ts';
import { callTool, offersFor, relayInput, type ConsumerView } from './calls.ts';
import { listedTool, servedName } from './catalog.ts';
import { getSkillPrompt, skillPromptList } from './skill-prompts.ts';
import type { Consumer } from './consumer.ts';
import type { GatewayDeps } from './deps.ts';
import { Exchange } from './exchange.ts';

/** How the consumer of a request is found: fixed for a connection, by name for 2026 HTTP. */
type ConsumerOf = (ctx: ServerContext, server: Server) => Consumer;

type Envelope = Record<string, unknown> | undefined;

/** Who sent this request and what it can do (its envelope, else what it declared at start). */
const viewOf = (
  deps: GatewayDeps,
  consumer: Consumer,
  transport: 'stdio' | 'http',
  server: Server,
  ctx: ServerContext,
): ConsumerView => {
  const envelope = ctx.mcpReq.envelope as Envelope;
  const info = envelope?.[CLIENT_INFO_META_KEY] ?? server.getClientVersion();
  const declared = envelope?.[CLIENT_CAPABILITIES_META_KEY] ?? server.getClientCapabilities();
  const revision = (envelope?.[PROTOCOL_VERSION_META_KEY] ??
    server.getNegotiatedProtocolVersion()) as string | undefined;
  consumer.identify(info, revision);
  const override = deps.loaded()?.config.serve.clients[consumer.name] ?? {};
  return {
    consumer,
    profile: clientProfile({ name: consumer.name, transport }, declared, override),
  };
};

/**
 * Forwards one request to the server that answers for it, as a round of an exchange: the
 * server's elicitations and sampling meanwhile are asked of the consumer.
 */
const forwardTo = async (
  deps: GatewayDeps,
  view: ConsumerView,
  ctx: ServerContext,
  target: { server: string; method: McpForwardMethod; params: Record<string, unknown> },
) => {
  const owner = `${view.consumer.id}:${target.method}`;
  // A server still starting answers once it is up (a scoped consumer names it before it is).
  await deps.settled(ctx.mcpReq.signal, [target.server]);
  return deps.exchanges.round(
    ctx,
    owner,
    (first) =>
      new Exchange(
        (asker) =>
          deps.mcp.forward(target.server, target.method, target.params, {
            signal: asker.signal,
            ...relayInput(view, asker),
          }),
        owner,
        first,
      ),
    (outcome) => {
      if (!outcome.ok) throw new ProtocolError(outcome.code, outcome.message, outcome.data);
      return outcome.result;
    },
  );
};

/**
 * What `find` finds — once the servers still starting are done, if it is not there yet. A consumer
 * may ask by name or URI before listing (it listed in an earlier session, or a scenario knows the
 * name): a server still starting answers then, it is not "unknown". Every lookup by name or URI
 * goes through here (tools/call's has its own, for the tools hidden from a consumer).
 */
const findSettled = async <T>(
  deps: GatewayDeps,
  signal: AbortSignal,
  find: () => Promise<T | undefined>,
): Promise<T | undefined> => {
  const found = await find();
  if (found !== undefined) return found;
  await deps.settled(signal);
  return find();
};

const notFound = (what: string, name: string, list: string): ProtocolError =>
  new ProtocolError(-32602, `unknown ${what} "${name}"; ${list} names those this client can use`);

/** Installs the tools, prompts, resources and completion handlers on one `Server`. */
const install = (deps: GatewayDeps, server: Server, view: (ctx: ServerContext) => ConsumerView) => {
  server.setRequestHandler('tools/list', async (_request, ctx) => {
    // A client that lists once, at its start, gets the servers still starting too.
    await deps.settled(ctx.mcpReq.signal);
    const v = view(ctx);
    const { offered } = await offersFor(deps, v);
    return { tools: offered.map((o) => listedTool(o, o.gateway, v.consumer.scope)) };
  });
  server.setRequestHandler('tools/call', (request, ctx) =>
    callTool(deps, view(ctx), request.params, ctx),
  );
  installPrompts(deps, server, view);
  installResources(deps, server, view);
};

/** `prompts/list`: the backing servers' prompts, then the workspace's skills. */
const listPrompts = async (deps: GatewayDeps, view: ConsumerView, ctx: ServerContext) => {
  await deps.settled(ctx.mcpReq.signal);
  const { scope } = view.consumer;
  return {
    prompts: [
      ...(await deps.catalog.prompts(scope)).map((p) => ({
        name: servedName(p.server, p.name, scope),
        ...(p.description ? { description: p.description } : {}),
        ...(p.arguments ? { arguments: p.arguments } : {}),
      })),
      ...skillPromptList(deps.loaded(), scope),
    ],
  };
};

const installPrompts = (
  deps: GatewayDeps,
  server: Server,
  view: (ctx: ServerContext) => ConsumerView,
) => {
  const find = async (ctx: ServerContext, name: string) => {
    const { scope } = view(ctx).consumer;
    const prompt = await findSettled(deps, ctx.mcpReq.signal, async () =>
      (await deps.catalog.prompts(scope)).find((p) => servedName(p.server, p.name, scope) === name),
    );
    if (!prompt) throw notFound('prompt', name, 'prompts/list');
    return prompt;
  };
  server.setRequestHandler('prompts/list', async (_request, ctx) =>
    listPrompts(deps, view(ctx), ctx),
  );
  server.setRequestHandler('prompts/get', async (request, ctx) => {
    const { scope } = view(ctx).consumer;
    const { name, arguments: args } = request.params;
    const skill = getSkillPrompt(deps.loaded(), scope, deps.root, name, args);
    if (skill) return skill;
    const prompt = await find(ctx, request.params.name);
    return (await forwardTo(deps, view(ctx), ctx, {
      server: prompt.server,
      method: 'prompts/get',
      params: { ...request.params, name: prompt.name },
    })) as never;
  });
  server.setRequestHandler('completion/complete', async (request, ctx) => {
    const { ref } = request.params;
    if (ref.type === 'ref/prompt') {
      const prompt = await find(ctx, ref.name);
      return (await forwardTo(deps, view(ctx), ctx, {
        server: prompt.server,
        method: 'completion/complete',
        params: { ...request.params, ref: { type: 'ref/prompt', name: prompt.name } },
      })) as never;
    }
    const { scope } = view(ctx).consumer;
    const template = await findSettled(deps, ctx.mcpReq.signal, async () =>
      (await deps.catalog.templates(scope)).find((t) => t.uriTemplate === ref.uri),
    );
    if (!template) return { completion: { values: [], hasMore: false } };
    return (await forwardTo(deps, view(ctx), ctx, {
      server: template.server,
      method: 'completion/complete',
      params: request.params,
    })) as never;
  });
};

const installResources = (
  deps: GatewayDeps,
  server: Server,
  view: (ctx: ServerContext) => ConsumerView,
) => {
  const serverOf = async (ctx: ServerContext, uri: string) => {
    const { scope } = view(ctx).consumer;
    const found = await findSettled(deps, ctx.mcpReq.signal, () =>
      deps.catalog.serverOfUri(uri, scope),
    );
    if (!found) throw new ProtocolError(-32002, `Resource not found: ${uri}`, { uri });
    return found;
  };
  server.setRequestHandler('resources/list', async (_request, ctx) => {
    await deps.settled(ctx.mcpReq.signal);
    const { scope } = view(ctx).consumer;
    return {
      resources: (await deps.catalog.resources(scope)).map(({ server: s, name, ...rest }) => ({
        ...rest,
        name: servedName(s, name, scope),
      })),
    };
  });
  server.setRequestHandler('resources/templates/list', async (_request, ctx) => {
    await deps.settled(ctx.mcpReq.signal);
    const { scope } = view(ctx).consumer;
    return {
      resourceTemplates: (await deps.catalog.templates(scope)).map(
        ({ server: s, name, ...rest }) => ({ ...rest, name: servedName(s, name, scope) }),
      ),
    };
  });
  server.setRequestHandler('resources/read', async (request, ctx) => {
    const target = await serverOf(ctx, request.params.uri);
    return (await forwardTo(deps, view(ctx), ctx, {
      server: target,
      method: 'resources/read',
      params: request.params,
    })) as never;
  });
  for (const method of ['resources/subscribe', 'resources/unsubscribe'] as const)
    server.setRequestHandler(method, async (request, ctx) => {
      const target = await serverOf(ctx, request.params.uri);
      await deps.settled(ctx.mcpReq.signal, [target]);
      const outcome = await deps.mcp.forward(target, method, request.params, {
        signal: ctx.mcpReq.signal,
      });
      // A server that takes no subscriptions still lets the consumer follow the resource's list.
      return outcome.ok || outcome.code === -32601
        ? {}
        : Promise.reject(new ProtocolError(outcome.code, outcome.message));
    });
};

/** What the gateway tells a consumer about itself (`instructions`). */
const instructionsFor = (root: string, scope: string | undefined): string =>
  scope
    ? `The tools, prompts and resources of the MCP server "${scope}" of the repository ${path.basename(root)}, kept warm by niffler.`
    : `Tools of the git repository ${path.basename(root)}, served by niffler: its built-in file and shell tools (read_file, list_dir, grep, edit_file, bash…), the repository's own tools, and the tools of its MCP servers, named server__tool; prompts and resources likewise.`;

/**
 * A factory of the gateway's SDK `Server` for one consumer (a connection, or a 2026-07-28 HTTP
 * request): both eras, as the serving entry negotiates; `requestState` sealed by the exchanges.
 */
export const gatewayServer =
  (deps: GatewayDeps, consumerOf: ConsumerOf, transport: 'stdio' | 'http', scope?: string) =>
  (): Server => {
    const server = new Server(
      { name: 'niffler', version: VERSION, title: `niffler (${path.basename(deps.root)})` },
      {
        capabilities: {
          tools: { listChanged: true },
          prompts: { listChanged: true },
          resources: { listChanged: true, subscribe: true },
          logging: {},
          completions: {},
        },
        instructions: instructionsFor(deps.root, scope),
        requestState: { verify: deps.exchanges.verify },
      },
    );
    install(deps, server, (ctx) => viewOf(deps, consumerOf(ctx, server), transport, server, ctx));
    return server;
  };

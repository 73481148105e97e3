import {
  Client,
  LOG_LEVEL_META_KEY,
  ProtocolError,
  ProtocolErrorCode,
  SdkError,
  SdkErrorCode,
  type McpSubscription,
  type RequestOptions,
  type Transport,
} from '@modelcontextprotocol/client';
import {
  MODERN_REVISION,
  type McpLogLevel,
  type McpServerSpec,
  type McpTransportKind,
} from '../protocol/mcp.ts';
import type { AuthHooks, ServerAuth } from './auth/provider.ts';
import { serverAuthFor, storedAccessToken } from './auth/setup.ts';
import { listCatalog, MAX_PAGES } from './catalog.ts';
import type { Catalog } from './catalog-types.ts';
import { withinCallOf } from './call-scope.ts';
import {
  CLIENT_CAPABILITIES,
  CLIENT_INFO,
  installClientHandlers,
  type ClientSide,
} from './client-handlers.ts';
import {
  authorizationKey,
  negotiationFor,
  verdictOf,
  type Negotiation,
  type VerdictStore,
} from './negotiation.ts';
import { catalogProblems } from './problems.ts';
import { isStandardSchema, resultValidator } from './result-validators.ts';
import type { ProtocolTrace } from './trace.ts';
import { createTransport, exitedByItself, isProcess, type TransportHooks } from './transports.ts';
import { whenAborted } from '../shared/abort.ts';

/**
 * The SDK's own timeout for the requests of a start (its default is 60 s): the longest a timer
 * can wait, so it never fires. The start's deadline is the attempt's abort signal alone, whose
 * timer a browser authorization re-arms; the SDK's timer cannot be re-armed.
 */
const NO_SDK_TIMEOUT = 2 ** 31 - 1;
/** Rounds of `input_required` one request may take before it is given up. */
export const MAX_INPUT_ROUNDS = 8;

/** What opening a link needs from the connection around it. */
export interface LinkContext {
  root: string;
  authDir: string | undefined;
  killGraceMs: number;
  verdicts: VerdictStore;
  /** May an `auto` server of unknown era be probed (see `McpWorkerData.probe`). */
  probe: boolean;
  logLevel: McpLogLevel;
  side: ClientSide;
  auth: AuthHooks;
  trace: ProtocolTrace;
  io: Pick<TransportHooks, 'onStderr' | 'onNoise' | 'serversDir' | 'spill'>;
  /** The link closed by itself (the process exited, the socket dropped). */
  onClose: () => void;
  onError: (error: Error) => void;
  /** A line for the server's log. */
  log: (text: string) => void;
  /** A protocol problem of the server, for `mcp status` (and its log). */
  note: (problem: string) => void;
}

export const abortable = <T>(promise: Promise<T>, signal: AbortSignal): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    const offAbort = whenAborted(signal, () => reject(signal.reason as Error));
    promise.then(resolve, reject).finally(offAbort);
  });

/**
 * One connected server: the SDK `Client` on its transport after the handshake — `initialize`, or
 * `server/discover` for 2026-07-28 — with its OAuth client, if any. Built by `openLink`.
 */
export class ServerLink {
  private subscription: McpSubscription | undefined;
  private closed = false;

  constructor(
    readonly client: Client,
    readonly transport: Transport,
    readonly kind: McpTransportKind,
    readonly auth: ServerAuth | undefined,
    readonly negotiation: Negotiation,
  ) {}

  get isModern(): boolean {
    return this.client.getProtocolEra() === 'modern';
  }

  get pid(): number | null {
    return isProcess(this.transport) ? this.transport.pid : null;
  }

  /** `_meta` for a request: on 2026-07-28, the log level the server may log at (none otherwise). */
  requestMeta(level: McpLogLevel): Record<string, unknown> | undefined {
    return this.isModern ? { [LOG_LEVEL_META_KEY]: level } : undefined;
  }

  /**
   * On 2026-07-28, change notifications come only on a `subscriptions/listen` stream: opens one
   * for the lists the server says change; reopens it when it drops while the link lives.
   */
  listen(onDropped: (reason: string) => void): void {
    const caps = this.client.getServerCapabilities();
    const filter = {
      ...(caps?.tools?.listChanged ? { toolsListChanged: true } : {}),
      ...(caps?.prompts?.listChanged ? { promptsListChanged: true } : {}),
      ...(caps?.resources?.listChanged ? { resourcesListChanged: true } : {}),
    };
    if (!this.isModern || Object.keys(filter).length === 0 || this.closed) return;
    this.client
      .listen(filter)
      .then((subscription) => {
        this.subscription = subscription;
        return subscription.closed;
      })
      .then((reason) => {
        if (reason === 'remote' && !this.closed) onDropped('the change subscription dropped');
      })
      .catch((error: unknown) =>
        onDropped(`subscriptions/listen failed: ${(error as Error).message}`),
      );
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.subscription?.close().catch(() => undefined);
    await this.auth?.close();
    await this.client.close();
  }
}

/**
 * Opens a link to `spec` over `kind` (its transport, or `sse` when Streamable HTTP falls back),
 * negotiates the protocol era, sets the log level and lists the catalog, all within `signal`.
 */
export const openLink = async (
  spec: McpServerSpec,
  kind: McpTransportKind,
  ctx: LinkContext,
  signal: AbortSignal,
): Promise<{ link: ServerLink; catalog: Catalog }> => {
  const negotiation = negotiationFor(spec, ctx.verdicts, {
    authorization: authorizationKey(spec, storedAccessToken(spec, kind, ctx.authDir)),
    probe: ctx.probe,
    // On stdio a probe nobody answers means a 2025 server (falls back to initialize); elsewhere
    // silence is an outage, and the probe (an authorization in the browser, too) runs until the
    // start's deadline.
    probeTimeoutMs:
      kind === 'stdio'
        ? Math.min(10_000, Math.max(1_000, spec.startupTimeoutMs / 3))
        : NO_SDK_TIMEOUT,
  });
  const link = await connect(spec, kind, ctx, negotiation, signal).catch((error: unknown) => {
    // A kept verdict that did not hold (the server no longer speaks what it did) is dropped.
    if (negotiation.prior || (negotiation.probes && typeof negotiation.mode?.mode === 'object'))
      ctx.verdicts.set(negotiation.key, undefined);
    throw error;
  });
  try {
    if (negotiation.probes) {
      // The context it was given in: the token the connect presented (a login may have made one).
      const token = link.auth ? link.auth.tokens()?.access_token : undefined;
      const verdict = verdictOf(link.client, authorizationKey(spec, token));
      if (verdict) ctx.verdicts.set(negotiation.key, verdict);
    }
    await setLogLevel(link, ctx, signal);
    const catalog = await abortable(
      listCatalog(link.client, { signal, timeout: NO_SDK_TIMEOUT }),
      signal,
    ).catch((error: unknown) => {
      if (!link.isModern) throw error;
      ctx.verdicts.set(negotiation.key, undefined);
      throw new Error(
        `advertised protocol ${MODERN_REVISION} but then failed to list its catalog: ${(error as Error).message}`,
        { cause: error },
      );
    });
    for (const problem of catalogProblems(catalog)) ctx.note(problem);
    return { link, catalog };
  } catch (error) {
    await link.close().catch(() => undefined);
    throw error;
  }
};

/**
 * The SDK's client, with a 2026-07-28 server's `input_required` rounds fulfilled inside the call
 * that got them: what the server asks then is put to whoever made that call, not to the latest;
 * and each spec request validated by a result validator made once (see result-validators.ts).
 */
class CallScopedClient extends Client {
  override request(
    request: Parameters<Client['request']>[0],
    schemaOrOptions?: unknown,
    options?: RequestOptions,
  ): Promise<unknown> {
    // While the era is still being negotiated, the SDK picks the codec by method: left to it.
    if (!isStandardSchema(schemaOrOptions) && this._negotiatedProtocolVersion !== undefined) {
      const validator = resultValidator(this._wireCodec(), request.method);
      if (validator) return super.request(request, validator, schemaOrOptions as RequestOptions);
    }
    return (super.request as (...args: unknown[]) => Promise<unknown>)(
      request,
      schemaOrOptions,
      options,
    );
  }

  protected override _resolveNonCompleteResult(
    decoded: {
      kind: 'input_required';
      inputRequests: Record<string, unknown>;
      requestState?: string;
    },
    flow: { options: RequestOptions | undefined },
  ): Promise<unknown> {
    return withinCallOf(flow.options?.signal, () =>
      super._resolveNonCompleteResult(decoded, flow as never),
    );
  }
}

const connect = async (
  spec: McpServerSpec,
  kind: McpTransportKind,
  ctx: LinkContext,
  negotiation: Negotiation,
  signal: AbortSignal,
): Promise<ServerLink> => {
  const client = new CallScopedClient(CLIENT_INFO, {
    capabilities: CLIENT_CAPABILITIES,
    ...(negotiation.mode ? { versionNegotiation: negotiation.mode } : {}),
    inputRequired: { maxRounds: MAX_INPUT_ROUNDS },
    listMaxPages: MAX_PAGES,
  });
  installClientHandlers(client, ctx.side);
  const authed = serverAuthFor(spec, kind, ctx, ctx.auth);
  const transport = ctx.trace.attach(
    createTransport(spec, kind, {
      ...ctx.io,
      root: ctx.root,
      killGraceMs: ctx.killGraceMs,
      fetch: authed?.fetch,
    }),
  );
  const link = new ServerLink(client, transport, kind, authed?.auth, negotiation);
  client.onclose = ctx.onClose;
  client.onerror = ctx.onError;
  try {
    // On Streamable HTTP an authorization, the browser included, runs inside the handshake.
    await abortable(
      client.connect(transport, {
        signal,
        timeout: NO_SDK_TIMEOUT,
        ...(negotiation.prior ? { prior: negotiation.prior } : {}),
      }),
      signal,
    );
    return link;
  } catch (error) {
    const exit = exitedByItself(transport);
    const exitedOnProbe = negotiation.probes && exit !== undefined;
    client.onclose = undefined;
    await link.close().catch(() => undefined);
    // A server that exits on a request before `initialize` (rmcp does) speaks 2025: again, legacy.
    if (exitedOnProbe && spec.protocol !== MODERN_REVISION && isNegotiationFailure(error)) {
      ctx.verdicts.set(negotiation.key, { era: 'legacy', at: Date.now() });
      ctx.log('exited on the server/discover probe; connecting with initialize (protocol 2025)');
      return connect(spec, kind, ctx, { ...negotiation, mode: undefined, probes: false }, signal);
    }
    const failure = describeNegotiation(error, spec, negotiation.probes);
    if (exit) throw new ProcessExited(exit, failure);
    throw failure;
  }
};

/** A server process that exited while its link was being opened. */
export class ProcessExited extends Error {
  override name = 'ProcessExited';
  constructor(
    readonly exit: { code: number | null; signal: NodeJS.Signals | null },
    cause: Error,
  ) {
    super(cause.message, { cause });
  }
}

const isNegotiationFailure = (error: unknown): boolean =>
  SdkError.isInstance(error) &&
  (error.code === SdkErrorCode.EraNegotiationFailed ||
    error.code === SdkErrorCode.ConnectionClosed);

/** A failed negotiation, worded for `mcp status`. */
const describeNegotiation = (error: unknown, spec: McpServerSpec, probed: boolean): Error => {
  if (
    ProtocolError.isInstance(error) &&
    error.code === (ProtocolErrorCode.UnsupportedProtocolVersion as number)
  ) {
    const supported = (error.data as { supported?: unknown } | undefined)?.supported;
    const offers = Array.isArray(supported) ? ` (it speaks ${supported.join(', ')})` : '';
    // `auto` without a probe: no daemon keeps this server, so none was made (see negotiationFor).
    const next =
      spec.protocol === 'legacy'
        ? 'remove protocol: legacy to let niffler negotiate'
        : `set protocol: ${MODERN_REVISION}, or start it once through the daemon (niffler mcp start ${spec.name}) to find out`;
    return new Error(`does not speak the 2025 protocol${offers}: ${error.message}; ${next}`, {
      cause: error,
    });
  }
  // A JSON-RPC error after a probe: the probe found no 2026-07-28, and `initialize` failed too.
  if (probed && ProtocolError.isInstance(error))
    return new Error(
      `negotiating the protocol failed: server/discover gave no ${MODERN_REVISION} answer, and initialize failed: ${error.message}`,
      { cause: error },
    );
  if (!SdkError.isInstance(error) || error.code !== SdkErrorCode.EraNegotiationFailed)
    return error as Error;
  const pinned = spec.protocol === MODERN_REVISION;
  return new Error(
    pinned
      ? `does not speak protocol ${MODERN_REVISION} (pinned by protocol: ${MODERN_REVISION}): ${error.message}; set protocol: auto to let it use an earlier revision`
      : `negotiating the protocol failed: ${error.message}`,
    { cause: error },
  );
};

/** `logging/setLevel` where the server logs and the era has it (2026-07-28 asks per request). */
const setLogLevel = async (
  link: ServerLink,
  ctx: LinkContext,
  signal: AbortSignal,
): Promise<void> => {
  if (link.isModern || !link.client.getServerCapabilities()?.logging) return;
  await link.client
    .setLoggingLevel(ctx.logLevel, { signal, timeout: NO_SDK_TIMEOUT })
    .catch((error: unknown) => ctx.log(`logging/setLevel failed: ${(error as Error).message}`));
};

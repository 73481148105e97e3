import net from 'node:net';
import type { MessagePort } from 'node:worker_threads';
import {
  createMessageConnection,
  PortMessageReader,
  PortMessageWriter,
  SocketMessageReader,
  type MessageConnection,
} from 'vscode-jsonrpc/node';
import { SocketFrameWriter } from './socket-writer.ts';
import { NifflerError } from '../errors.ts';
import { VERSION } from '../version.ts';
import { fromResponseError, requestHandlers, sendUntilClosed } from './connection.ts';
import type {
  ClientCalls,
  ClientMethod,
  EngineMethod,
  EngineNotification,
  EngineNotifications,
  FrontendNotification,
  FrontendNotifications,
  HelloResult,
  ParamsOf,
  ResultOf,
} from '../protocol.ts';

/**
 * How a front-end tells a live daemon from a frozen one: while a request is in flight, the daemon
 * sends something (an answer, an event, a heartbeat) at least every `timeoutMs`, or the request
 * fails with `error()`.
 */
interface Liveness {
  timeoutMs: number;
  /** Registers `seen`, to be called whenever anything arrives from the daemon. */
  watch: (seen: () => void) => void;
  error: () => NifflerError;
}

/** The front-end's handle on an engine, over the daemon socket or an in-process port. */
export class EngineClient {
  #closed = false;
  readonly #handle: ReturnType<typeof requestHandlers>;
  #pending = 0;
  #lastSeen = 0;
  #watchdog: NodeJS.Timeout | undefined;
  /** Why the connection was given up (the daemon stopped answering). */
  #failure: NifflerError | undefined;

  constructor(
    private readonly connection: MessageConnection,
    private readonly onDispose: () => void = () => {},
    private readonly liveness?: Liveness,
  ) {
    connection.onClose(() => (this.#closed = true));
    liveness?.watch(() => (this.#lastSeen = Date.now()));
    this.#handle = requestHandlers(connection);
    connection.listen();
  }

  #begin(): void {
    if (this.#pending++ > 0 || !this.liveness) return;
    const { timeoutMs } = this.liveness;
    this.#lastSeen = Date.now();
    this.#watchdog = setInterval(
      () => {
        if (Date.now() - this.#lastSeen < timeoutMs) return;
        this.#failure ??= this.liveness!.error();
        this.close();
      },
      Math.min(250, timeoutMs / 4),
    );
    this.#watchdog.unref();
  }

  #end(): void {
    if (--this.#pending === 0) clearInterval(this.#watchdog);
  }

  /** Sends one request; engine errors come back as `NifflerError`s with their codes. */
  async request<M extends EngineMethod>(
    method: M,
    params: ParamsOf<M>,
    signal?: AbortSignal,
  ): Promise<ResultOf<M>> {
    if (this.#failure) throw this.#failure;
    this.#begin();
    try {
      return await sendUntilClosed<ResultOf<M>>(
        this.connection,
        method,
        params,
        signal,
        () =>
          this.#failure ??
          new NifflerError(
            'daemon-unreachable',
            `the daemon closed the connection during ${method}; run the command again (niffler daemon status shows the daemon)`,
          ),
        this.#closed,
      );
    } catch (error) {
      throw this.#failure ?? fromResponseError(error);
    } finally {
      this.#end();
    }
  }

  onNotification<N extends EngineNotification>(
    name: N,
    listener: (params: EngineNotifications[N]) => void,
  ): () => void {
    const disposable = this.connection.onNotification(name, (params: EngineNotifications[N]) =>
      listener(params),
    );
    return () => disposable.dispose();
  }

  /** Sends the engine a notification (the gateway's consumer messages); dropped once closed. */
  notify<N extends FrontendNotification>(name: N, params: FrontendNotifications[N]): void {
    if (this.#closed) return;
    this.connection.sendNotification(name, params).catch(() => {});
  }

  /** Called once when the connection to the engine ends (however it ends). */
  onClose(listener: () => void): void {
    this.connection.onClose(listener);
  }

  /** Answers requests the engine sends to this front-end (approvals, elicitations, sampling). */
  onRequest<M extends ClientMethod>(
    method: M,
    handler: (
      params: ClientCalls[M]['params'],
      signal: AbortSignal,
    ) => Promise<ClientCalls[M]['result']>,
  ): void {
    // Its signal also aborts when the daemon goes away mid-question.
    this.#handle(method, handler);
  }

  hello(client: string): Promise<HelloResult> {
    return this.request('hello', { version: VERSION, pid: process.pid, client });
  }

  close(): void {
    clearInterval(this.#watchdog);
    if (!this.#closed) this.connection.dispose();
    this.#closed = true;
    this.onDispose();
  }
}

/**
 * Connects to a daemon socket; rejects with the socket error (ENOENT, ECONNREFUSED…). With
 * `liveness`, a request in flight fails once the daemon has been silent for its deadline.
 */
export const connectSocket = (
  socketPath: string,
  liveness?: Omit<Liveness, 'watch'>,
): Promise<EngineClient> =>
  new Promise((resolve, reject) => {
    const socket = net.connect(socketPath);
    socket.once('error', reject);
    socket.once('connect', () => {
      socket.off('error', reject);
      // A dead daemon must not crash the front-end; the connection's close handlers report it.
      socket.on('error', () => {});
      const connection = createMessageConnection(
        new SocketMessageReader(socket),
        new SocketFrameWriter(socket),
      );
      const watch = (seen: () => void) => void socket.on('data', seen);
      resolve(
        new EngineClient(
          connection,
          () => socket.destroy(),
          liveness ? { ...liveness, watch } : undefined,
        ),
      );
    });
  });

/** Wraps one end of a `MessageChannel` (in-process engine). */
export const connectPort = (port: MessagePort): EngineClient =>
  new EngineClient(
    createMessageConnection(new PortMessageReader(port), new PortMessageWriter(port)),
    () => port.close(),
  );

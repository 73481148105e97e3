import net from 'node:net';
import type { MessagePort } from 'node:worker_threads';
import {
  createMessageConnection,
  PortMessageReader,
  PortMessageWriter,
  SocketMessageReader,
  SocketMessageWriter,
  type MessageConnection,
} from 'vscode-jsonrpc/node';
import { NifflerError } from '../errors.ts';
import { VERSION } from '../version.ts';
import { fromResponseError, requestHandlers, sendUntilClosed } from './connection.ts';
import type {
  ClientCalls,
  ClientMethod,
  EngineMethod,
  EngineNotification,
  EngineNotifications,
  HelloResult,
  ParamsOf,
  ResultOf,
} from '../protocol.ts';

/** The front-end's handle on an engine, over the daemon socket or an in-process port. */
export class EngineClient {
  #closed = false;
  readonly #handle: ReturnType<typeof requestHandlers>;
  constructor(
    private readonly connection: MessageConnection,
    private readonly onDispose: () => void = () => {},
  ) {
    connection.onClose(() => (this.#closed = true));
    this.#handle = requestHandlers(connection);
    connection.listen();
  }

  /** Sends one request; engine errors come back as `NifflerError`s with their codes. */
  async request<M extends EngineMethod>(
    method: M,
    params: ParamsOf<M>,
    signal?: AbortSignal,
  ): Promise<ResultOf<M>> {
    try {
      return await sendUntilClosed<ResultOf<M>>(
        this.connection,
        method,
        params,
        signal,
        () =>
          new NifflerError(
            'daemon-unreachable',
            `the daemon closed the connection during ${method}; run the command again (niffler daemon status shows the daemon)`,
          ),
        this.#closed,
      );
    } catch (error) {
      throw fromResponseError(error);
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
    if (!this.#closed) this.connection.dispose();
    this.#closed = true;
    this.onDispose();
  }
}

/** Connects to a daemon socket; rejects with the socket error (ENOENT, ECONNREFUSED…). */
export const connectSocket = (socketPath: string): Promise<EngineClient> =>
  new Promise((resolve, reject) => {
    const socket = net.connect(socketPath);
    socket.once('error', reject);
    socket.once('connect', () => {
      socket.off('error', reject);
      // A dead daemon must not crash the front-end; the connection's close handlers report it.
      socket.on('error', () => {});
      const connection = createMessageConnection(
        new SocketMessageReader(socket),
        new SocketMessageWriter(socket),
      );
      resolve(new EngineClient(connection, () => socket.destroy()));
    });
  });

/** Wraps one end of a `MessageChannel` (in-process engine). */
export const connectPort = (port: MessagePort): EngineClient =>
  new EngineClient(
    createMessageConnection(new PortMessageReader(port), new PortMessageWriter(port)),
    () => port.close(),
  );

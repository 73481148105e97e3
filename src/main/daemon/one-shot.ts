import net from 'node:net';
import { NifflerError, fromWire, type WireError } from '../errors.ts';
import { nifflerPaths } from '../paths.ts';
import { daemonTimeoutMs, DEFAULT_DAEMON_TIMEOUT_MS, notResponding } from './deadline.ts';
import { VERSION } from '../version.ts';
import { WIRE_ERROR_CODE, type HelloResult, type ParamsOf, type ResultOf } from '../protocol.ts';
import { frame, FrameReader } from './frames.ts';
import type { ConnectOptions } from './connect-options.ts';

// The one-question commands (`mcp status`, `daemon status`) ask a warm daemon one thing and print
// the answer; scripts and status lines call them many times a minute. A vscode-jsonrpc connection
// (what every other command uses, through EngineClient) costs such a command a third of its run:
// loading the library and setting up a connection for two requests took it from 1.24x to 1.5x
// `node -e 0` (bench/mcp-status.bench.ts). So these two requests go out by hand, framed as
// vscode-jsonrpc frames them on the daemon's end (a Content-Length header, then the JSON), and the
// library is loaded only when the daemon has to be started or replaced.

/** The requests a one-shot client may send: read-only ones (see `requestDaemon`). */
type OneShotMethod = 'mcp/status' | 'daemon/status';

interface Reply {
  id?: number | string | null;
  method?: string;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

const HELLO_ID = 1;
const ASK_ID = 2;

/** What `requestDaemon` came to. */
interface OneShotReply<R> {
  /** The answer; `null` when no daemon runs and none was to be started. */
  result: R;
  /**
   * True when it took the machinery that starts or replaces a daemon (no daemon of this version
   * answered at once), false when a warm daemon answered, or plainly none was there.
   */
  fallback: boolean;
}

/** What a one-shot exchange came to. */
type OneShot<M extends OneShotMethod> =
  /** The daemon said hello and answered. */
  | { kind: 'answered'; result: ResultOf<M> }
  /** No daemon listens on the socket (none, or a stale socket). */
  | { kind: 'absent' }
  /** A daemon listens but did not say hello: another version, or it went away first. */
  | { kind: 'refused' };

/** True for the errors of connecting where no daemon listens (no socket, or a stale one). */
export const isNoDaemon = (error: unknown): boolean => {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ECONNREFUSED' || code === 'ENOTSOCK';
};

const unreachable = (method: string, why: string, cause?: unknown) =>
  new NifflerError(
    'daemon-unreachable',
    `${why} during ${method}; run the command again (niffler daemon status shows the daemon)`,
    {},
    cause === undefined ? undefined : { cause },
  );

/** How long the daemon may stay silent, and where its pid is written (to name it then). */
interface Deadline {
  timeoutMs?: number;
  pidFile?: string;
}

/**
 * Sends `hello` and one read-only request to the daemon on `socketPath` in one write, so a warm
 * daemon answers both in one round trip. Engine errors reject as the `NifflerError`s they were; a
 * daemon that hangs up after its hello rejects with `daemon-unreachable`; one that takes the
 * connection and then stays silent past the deadline (stopped, or its event loop blocked) with
 * `daemon-unresponsive`. The request may take long (`mcp/status --wait` waits for servers to
 * start): the daemon's heartbeats keep it alive meanwhile.
 */
export const askOnce = <M extends OneShotMethod>(
  socketPath: string,
  client: string,
  method: M,
  params: ParamsOf<M>,
  deadline: Deadline = {},
): Promise<OneShot<M>> =>
  new Promise((resolve, reject) =>
    new Exchange(socketPath, method, deadline, resolve, reject).start(client, params),
  );

/** One connection of `askOnce`: hello and the request out in one write, the two answers in. */
class Exchange<M extends OneShotMethod> {
  readonly #socket: net.Socket;
  readonly #reader = new FrameReader();
  #hello: HelloResult | undefined;
  #answer: Reply | undefined;
  #connected = false;
  #silence: NodeJS.Timeout | undefined;

  constructor(
    private readonly socketPath: string,
    private readonly method: M,
    private readonly deadline: Deadline,
    private readonly resolve: (value: OneShot<M>) => void,
    private readonly reject: (error: unknown) => void,
  ) {
    this.#socket = net.connect(socketPath);
  }

  start(client: string, params: ParamsOf<M>): void {
    const socket = this.#socket;
    socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    socket.on('error', (error) => {
      if (!this.#connected && isNoDaemon(error)) this.resolve({ kind: 'absent' });
      else if (!this.#connected) this.reject(error);
      // After connecting, the close that follows reports it.
    });
    socket.on('close', () => {
      clearTimeout(this.#silence);
      if (!this.#connected) return;
      if (!this.#hello) this.resolve({ kind: 'refused' });
      else this.reject(unreachable(this.method, 'the daemon closed the connection'));
    });
    socket.once('connect', () => {
      this.#connected = true;
      this.#armSilence();
      socket.write(
        frame({
          id: HELLO_ID,
          method: 'hello',
          params: { version: VERSION, pid: process.pid, client },
        }) + frame({ id: ASK_ID, method: this.method, params }),
      );
    });
  }

  #finish(settle: () => void): void {
    clearTimeout(this.#silence);
    this.#socket.removeAllListeners('close');
    // Closed at once: ending it politely would keep this process alive until the daemon closes
    // its end too, a round trip (about 1 ms) for nothing.
    this.#socket.destroy();
    settle();
  }

  /** Any byte is a sign of life (the daemon's heartbeats too): the silence deadline starts again. */
  #armSilence(): void {
    clearTimeout(this.#silence);
    const timeoutMs = this.deadline.timeoutMs ?? DEFAULT_DAEMON_TIMEOUT_MS;
    this.#silence = setTimeout(
      () =>
        this.#finish(() =>
          this.reject(notResponding(this.deadline.pidFile ?? '', this.socketPath, timeoutMs)),
        ),
      timeoutMs,
    );
  }

  #onData(chunk: Buffer): void {
    this.#armSilence();
    try {
      for (const message of this.#reader.push(chunk) as Reply[]) this.#onMessage(message);
      if (this.#hello && this.#answer) this.#settle(this.#answer);
    } catch (error) {
      this.#finish(() =>
        this.reject(unreachable(this.method, 'the daemon sent what is not JSON-RPC', error)),
      );
    }
  }

  #onMessage(message: Reply): void {
    if (typeof message !== 'object' || message === null || Array.isArray(message))
      throw new Error(`a message that is not an object: ${JSON.stringify(message)}`);
    if (message.method !== undefined) {
      // The daemon asking this front-end something (nothing a read-only command can answer), or
      // telling it something (nothing it waits for).
      if (message.id !== undefined && message.id !== null)
        this.#socket.write(
          frame({
            id: message.id,
            error: { code: -32601, message: `${this.method} answers no ${message.method}` },
          }),
        );
      return;
    }
    if (message.id === HELLO_ID) {
      if (message.error || !(message.result as HelloResult | undefined)?.ok)
        return this.#finish(() => this.resolve({ kind: 'refused' }));
      this.#hello = message.result as HelloResult;
    } else if (message.id === ASK_ID) this.#answer = message;
  }

  #settle({ result, error }: Reply): void {
    if (!error)
      return this.#finish(() => this.resolve({ kind: 'answered', result: result as ResultOf<M> }));
    this.#finish(() =>
      this.reject(
        error.code === WIRE_ERROR_CODE && error.data
          ? fromWire(error.data as WireError)
          : unreachable(
              this.method,
              `the daemon failed (JSON-RPC error ${error.code}: ${error.message})`,
              error,
            ),
      ),
    );
  }
}

/**
 * One read-only request to the daemon of `root`: asked with `askOnce` when a daemon of this version
 * is warm, or once one this call started says it is ready; otherwise the `connectDaemon` way — starting one, or replacing one of another version,
 * unless `start` is false: then the result is `null` when no daemon runs. Read-only requests only:
 * a daemon of another version may see the request before it refuses the hello.
 */
export function requestDaemon<M extends OneShotMethod>(
  options: ConnectOptions & { start?: true },
  method: M,
  params: ParamsOf<M>,
): Promise<OneShotReply<ResultOf<M>>>;
export function requestDaemon<M extends OneShotMethod>(
  options: ConnectOptions,
  method: M,
  params: ParamsOf<M>,
): Promise<OneShotReply<ResultOf<M> | null>>;
export async function requestDaemon<M extends OneShotMethod>(
  options: ConnectOptions,
  method: M,
  params: ParamsOf<M>,
): Promise<OneShotReply<ResultOf<M> | null>> {
  const paths = nifflerPaths(options.root, options.env);
  const deadline = { timeoutMs: daemonTimeoutMs(options.env), pidFile: paths.pidFile };
  const once = await askOnce(paths.socket, options.client ?? 'cli', method, params, deadline);
  if (once.kind === 'answered') return { result: once.result, fallback: false };
  if (once.kind === 'absent' && options.start === false) return { result: null, fallback: false };
  // Loaded only here: the JSON-RPC library and the start-up machinery.
  const { connectDaemon, startDaemon } = await import('./lifecycle.ts');
  if (once.kind === 'absent') {
    // None runs: start one and ask it as a warm one is asked, hello and question in one write
    // (a cold start's daemon answers while its servers boot beside it on the same cores, where
    // each round trip more of a JSON-RPC connection costs tens of ms).
    const started = await startDaemon(options);
    const again =
      started === 'ready'
        ? await askOnce(paths.socket, options.client ?? 'cli', method, params, deadline)
        : undefined;
    if (again?.kind === 'answered') return { result: again.result, fallback: true };
  }
  const client = await connectDaemon(options);
  if (!client) return { result: null, fallback: true };
  try {
    return { result: await client.request(method, params), fallback: true };
  } finally {
    client.close();
  }
}

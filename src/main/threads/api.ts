import path from 'node:path';
import type { Worker } from 'node:worker_threads';
import { DEFAULT_MODELS, ModelSchema, type Config } from '../config/schema.ts';
import { fromWire, NifflerError } from '../errors.ts';
import { silentLogger, type Logger } from '../log.ts';
import { nifflerHome, tildify, type Env } from '../paths.ts';
import type {
  ApiEvent,
  ApiRequest,
  LlmEvent,
  ModelSpec,
  RetrySettings,
  StreamRequest,
} from '../../workers/protocol/api.ts';
import { exitCause, startWorker, type BootedWorker } from './entry.ts';
import { whenAborted } from '../../workers/shared/abort.ts';
import { mark } from '../../workers/shared/timeline.ts';

/** Defaults for what config does not say: retries before the first token, and the stall timer. */
export const DEFAULT_RETRY: RetrySettings = { maxRetries: 4, baseDelayMs: 500, maxDelayMs: 30_000 };
/** Generous: a local server may take minutes to load a model before its first byte. */
const DEFAULT_STALL_TIMEOUT_MS = 180_000;
const WATCHDOG_GRACE_MS = 10_000;

const DEFAULT_BASE_URL = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com',
  ollama: 'http://localhost:11434',
} as const;

const DEFAULT_KEY_ENV = { openai: 'OPENAI_API_KEY', anthropic: 'ANTHROPIC_API_KEY' } as const;

/**
 * Resolves model `name` (default: `config.model`) into the `ModelSpec` the API worker needs,
 * reading its API key from `env`. Throws `config-invalid` naming the model and what to configure.
 */
export const resolveModelSpec = (
  config: Config,
  name: string = config.model,
  env: Env = process.env,
  overrides: { retry?: Partial<RetrySettings>; stallTimeoutMs?: number } = {},
): ModelSpec => {
  const configFile = tildify(path.join(nifflerHome(env), 'config.yaml'), env);
  const entry =
    config.models[name] ??
    (DEFAULT_MODELS[name] ? ModelSchema.parse(DEFAULT_MODELS[name]) : undefined);
  if (!entry) {
    const known = Object.keys({ ...DEFAULT_MODELS, ...config.models });
    throw new NifflerError(
      'config-invalid',
      `model "${name}" is not configured (known: ${known.join(', ') || 'none'}). ` +
        `Add it under \`models:\` in ${configFile} (or .niffler/config.yaml), ` +
        `or choose a configured one with \`model:\` or \`--model NAME\`.`,
      { model: name, known },
    );
  }
  const usesOfficialHost = !entry.baseUrl && entry.provider !== 'ollama';
  const apiKeyEnv =
    entry.apiKeyEnv ??
    (usesOfficialHost && entry.provider !== 'ollama' ? DEFAULT_KEY_ENV[entry.provider] : undefined);
  const apiKey = apiKeyEnv ? env[apiKeyEnv] : undefined;
  if (apiKeyEnv && !apiKey)
    throw new NifflerError(
      'config-invalid',
      `model "${name}" reads its API key from $${apiKeyEnv}, which is not set. ` +
        `Export ${apiKeyEnv}, or set models.${name}.apiKeyEnv in ${configFile} to the variable that holds it.`,
      { model: name, apiKeyEnv },
    );
  return {
    name,
    provider: entry.provider,
    baseUrl: (entry.baseUrl ?? DEFAULT_BASE_URL[entry.provider]).replace(/\/+$/, ''),
    model: entry.model,
    ...(apiKey ? { apiKey } : {}),
    ...(apiKeyEnv ? { apiKeyEnv } : {}),
    toolProtocol: entry.toolProtocol,
    ...(entry.toolCallFormat ? { toolCallFormat: entry.toolCallFormat } : {}),
    vision: entry.vision ?? false,
    reasoning: entry.reasoning ?? false,
    ...(entry.maxTokens === undefined ? {} : { maxTokens: entry.maxTokens }),
    ...(entry.temperature === undefined ? {} : { temperature: entry.temperature }),
    ...(entry.headers ? { headers: entry.headers } : {}),
    retry: { ...DEFAULT_RETRY, ...overrides.retry },
    stallTimeoutMs: overrides.stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS,
    configFile,
  };
};

/** A queue one stream's events land in, read by the async generator in `stream()`. */
class EventQueue {
  #items: LlmEvent[] = [];
  #error: unknown;
  #failed = false;
  #wake: (() => void) | undefined;
  push(event: LlmEvent): void {
    this.#items.push(event);
    this.#wake?.();
  }
  fail(error: unknown): void {
    if (this.#failed) return;
    this.#failed = true;
    this.#error = error;
    this.#wake?.();
  }
  async next(): Promise<LlmEvent> {
    for (;;) {
      if (this.#failed) throw this.#error;
      const item = this.#items.shift();
      if (item) return item;
      await new Promise<void>((resolve) => (this.#wake = resolve));
      this.#wake = undefined;
    }
  }
}

const modelKey = (model: ModelSpec): string => `${model.provider} ${model.baseUrl} ${model.model}`;

interface ApiHostOptions {
  log?: Logger;
  /**
   * Called once, when the worker has taken the first request and sends it: not when it was
   * posted, as a worker still loading its model's client takes a posted request only once done
   * (what waits for the request then goes with it, rather than before it).
   */
  onFirstRequest?: () => void;
  /** A worker started already (a cold daemon's, daemon/early-workers.ts): the first one used. */
  booted?: BootedWorker;
}

/**
 * Owns the API worker thread. `stream()` yields a request's `LlmEvent`s up to `done` and throws a
 * `NifflerError` on failure (`canceled` when `signal` aborts, `worker-exited` when the worker
 * dies; the next call starts a new one). Remembers models that `auto` moved to the text protocol.
 */
export class ApiHost {
  readonly #log: Logger;
  #worker: Worker | undefined;
  #ready = false;
  #nextId = 1;
  #closed = false;
  readonly #streams = new Map<number, EventQueue>();
  readonly #textOnly = new Set<string>();
  /** The models the current worker has warmed (or is warming): once is enough. */
  readonly #warmed = new Set<string>();

  #onFirstRequest: (() => void) | undefined;
  #booted: ApiHostOptions['booted'];
  /** The model warmed last, when `release` ended the worker: `rewarm` warms it again. */
  #released: ModelSpec | undefined;
  #lastWarmed: ModelSpec | undefined;

  constructor(options: ApiHostOptions = {}) {
    this.#log = options.log ?? silentLogger;
    this.#onFirstRequest = options.onFirstRequest;
    this.#booted = options.booted;
  }

  /** Streams one request. Break out of the loop or abort `signal` to cancel the HTTP stream. */
  async *stream(
    request: StreamRequest,
    signal?: AbortSignal,
  ): AsyncGenerator<LlmEvent, void, undefined> {
    if (this.#closed) throw new NifflerError('internal', 'the API host is closed');
    if (signal?.aborted) throw new NifflerError('canceled', 'the request was canceled');
    const id = this.#nextId++;
    const queue = new EventQueue();
    this.#streams.set(id, queue);
    const worker = this.#ensureWorker();
    worker.ref();
    const onAbort = () => {
      this.#post({ type: 'cancel', id });
      queue.fail(new NifflerError('canceled', 'the request was canceled'));
    };
    const offAbort = whenAborted(signal, onAbort);
    // The worker times out a silent server itself; this catches a worker that stops answering.
    const { model } = request;
    const watchdogMs = model.stallTimeoutMs + model.retry.maxDelayMs + WATCHDOG_GRACE_MS;
    let watchdog: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(watchdog);
      watchdog = setTimeout(() => {
        this.#post({ type: 'cancel', id });
        queue.fail(
          new NifflerError('timeout', `the API worker sent nothing for ${watchdogMs / 1000}s`, {
            model: model.name,
          }),
        );
      }, watchdogMs);
    };
    let finished = false;
    try {
      this.#post({ type: 'stream', id, request: this.#withMemory(request) });
      for (;;) {
        arm();
        const event = await queue.next();
        if (event.type === 'error') {
          finished = true;
          throw fromWire(event.error);
        }
        if (event.type === 'tool-protocol') this.#textOnly.add(modelKey(request.model));
        if (event.type === 'done') finished = true;
        yield event;
        if (finished) return;
      }
    } finally {
      clearTimeout(watchdog);
      offAbort();
      this.#streams.delete(id);
      if (!finished) this.#post({ type: 'cancel', id });
      if (this.#streams.size === 0) this.#worker?.unref();
      // A first request the worker never took (it died first) holds nothing back either.
      this.#firstRequestTaken();
    }
  }

  /** Calls `onFirstRequest`, once. */
  #firstRequestTaken(): void {
    const first = this.#onFirstRequest;
    this.#onFirstRequest = undefined;
    first?.();
  }

  /**
   * Starts the worker and has it load `model`'s client library and run its request path once
   * against a loopback stub, so a first turn waits for none of it. The worker stays
   * unreferenced: warming keeps no process alive.
   */
  warm(model: ModelSpec): void {
    if (this.#closed || this.#warmed.has(modelKey(model))) return;
    this.#lastWarmed = model;
    this.#released = undefined;
    const worker = this.#ensureWorker();
    this.#warmed.add(modelKey(model));
    if (this.#streams.size === 0) worker.unref();
    this.#post({ type: 'warm', model });
  }

  /**
   * Ends the worker if it streams nothing (a daemon nobody has used for a while: a V8 isolate and
   * the model's client code, ~25 MB of its resident size); the next stream, `warm` or `rewarm`
   * starts another. Whether it ended one.
   */
  release(): boolean {
    const worker = this.#worker;
    if (!worker || this.#streams.size > 0) return false;
    this.#worker = undefined;
    this.#warmed.clear();
    this.#released = this.#lastWarmed;
    void worker.terminate();
    this.#log.info('ended the API worker: unused (it starts again with the next session)');
    return true;
  }

  /** Warms again the model warmed before `release` (a session opens: its prompt is near). */
  rewarm(): void {
    if (this.#released) this.warm(this.#released);
  }

  /**
   * Has the worker, if it runs and streams nothing, collect its garbage: `always` (after a busy
   * stretch of turns), otherwise if it grew enough to be worth it (a quiet daemon; shared/gc.ts).
   */
  collectGarbage(always = false): void {
    if (this.#streams.size === 0) this.#post({ type: 'collect-garbage', always });
  }

  /** Whether `auto` moved this model to the text protocol in this process. */
  usesTextProtocol(model: ModelSpec): boolean {
    return this.#textOnly.has(modelKey(model));
  }

  /** Stops the worker; pending streams fail with `worker-exited`. For shutdown and tests. */
  async terminateWorker(): Promise<void> {
    await this.#booted?.worker.terminate();
    await this.#worker?.terminate();
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.terminateWorker();
  }

  #withMemory(request: StreamRequest): StreamRequest {
    return request.model.toolProtocol === 'auto' && this.#textOnly.has(modelKey(request.model))
      ? { ...request, model: { ...request.model, toolProtocol: 'text' } }
      : request;
  }

  #post(message: ApiRequest): void {
    this.#worker?.postMessage(message);
  }

  #ensureWorker(): Worker {
    if (this.#worker) return this.#worker;
    const booted = this.#booted?.exited === false ? this.#booted : undefined;
    this.#booted = undefined;
    const worker = booted?.worker ?? startWorker('api');
    this.#worker = worker;
    this.#ready = booted?.ready ?? false;
    this.#warmed.clear();
    // A booted worker's `ready` is marked on the timeline where it was booted (early-workers.ts).
    const marks = !booted;
    worker.on('message', (message: ApiEvent) => this.#onMessage(message, marks));
    worker.on('error', (error: Error) =>
      this.#log.error('api worker failed', { error: error.message }),
    );
    worker.on('exit', (code) => {
      if (this.#worker !== worker) return;
      this.#worker = undefined;
      const why = this.#ready
        ? `the API worker exited (code ${code})${exitCause(worker)}`
        : `the API worker died while starting (code ${code})${exitCause(worker)}`;
      const error = new NifflerError('worker-exited', `${why}; the request was lost, try again`, {
        code,
      });
      for (const queue of this.#streams.values()) queue.fail(error);
    });
    return worker;
  }

  #onMessage(message: ApiEvent, marks: boolean): void {
    switch (message.type) {
      case 'ready':
        this.#ready = true;
        if (marks) mark('API worker ready');
        break;
      case 'taken':
        this.#firstRequestTaken();
        break;
      case 'event':
        this.#streams.get(message.id)?.push(message.event);
        break;
      case 'log':
        this.#log[message.level](message.msg, message.data);
        break;
      default:
        message satisfies never;
    }
  }
}

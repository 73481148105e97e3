import { randomUUID } from 'node:crypto';
import type { LlmEvent, Provider, StreamRequest, ToolCallFamily } from '../protocol/api.ts';
import { classify, LlmFailure } from './failure.ts';
import { applyTextProtocol } from './messages.ts';
import { ollamaDecision } from './ollama-show.ts';
import type { ProviderStream, WorkerLog } from './providers/provider.ts';
import { RecoveredStream, recoveryOptions } from './recovered-stream.ts';
import { backoffDelay, sleep } from './retry.ts';
import { whenAborted } from '../shared/abort.ts';

// Each client library loads on first use, so the worker starts without all three.
const PROVIDERS: Record<Provider, () => Promise<ProviderStream>> = {
  openai: async () => (await import('./providers/openai.ts')).streamOpenAi,
  anthropic: async () => (await import('./providers/anthropic.ts')).streamAnthropic,
  ollama: async () => (await import('./providers/ollama.ts')).streamOllama,
};

/** A provider's stream function, its client library loaded (once: imports are cached). */
export const loadProvider = (provider: Provider): Promise<ProviderStream> => PROVIDERS[provider]();

type Emit = (event: LlmEvent) => void;
type Protocol = 'native' | 'text';
/** How a request goes: its tool protocol, and the call syntax to look for first in its text. */
type Choice = { protocol: Protocol; hint?: ToolCallFamily };

/** Why a stream ended at the caller's wish. */
export const canceled = (): LlmFailure => new LlmFailure('canceled', 'the request was canceled');

const newId = (): string => `call_${randomUUID().replaceAll('-', '').slice(0, 24)}`;

const STARTED = new Set<LlmEvent['type']>(['text', 'reasoning', 'tool-call', 'tool-call-invalid']);

/** An attempt's own abort: the caller's signal, the stall timer, or the attempt's end. */
const attemptController = (signal: AbortSignal, model: StreamRequest['model']) => {
  const controller = new AbortController();
  const onAbort = () => controller.abort(signal.reason);
  const offAbort = whenAborted(signal, onAbort);
  const stalled = () =>
    controller.abort(
      new LlmFailure(
        'timeout',
        `model "${model.name}" at ${model.baseUrl} sent nothing for ${model.stallTimeoutMs / 1000}s; gave up on the stream`,
        { retryable: true, data: { url: model.baseUrl, stallTimeoutMs: model.stallTimeoutMs } },
      ),
    );
  return {
    controller,
    stalled,
    release: () => {
      offAbort();
      if (!controller.signal.aborted) controller.abort(new LlmFailure('canceled', 'attempt over'));
    },
  };
};

/**
 * Passes one provider event on: `done` ends the attempt (true); the rest goes through the
 * recovery, which may end it once the calls it read from text are complete.
 */
const relay = (
  event: LlmEvent,
  recovered: RecoveredStream,
  protocol: Protocol,
  emit: Emit,
  forward: Emit,
  controller: AbortController,
): boolean => {
  if (event.type === 'done') {
    controller.signal.throwIfAborted();
    for (const e of recovered.end()) forward(e);
    emit({
      ...event,
      stopReason: recovered.calls > 0 ? 'tool-calls' : event.stopReason,
      toolProtocol: protocol,
    });
    return true;
  }
  for (const e of recovered.push(event)) forward(e);
  if (!recovered.stopped) return false;
  // The calls are complete: end the HTTP stream instead of reading what follows.
  controller.abort(new LlmFailure('canceled', 'text tool call complete'));
  emit({ type: 'done', stopReason: 'tool-calls', toolProtocol: protocol });
  return true;
};

/** One HTTP attempt: stall timer, recovery of text calls, and the stop after them. */
const runAttempt = async (
  request: StreamRequest,
  { protocol, hint }: Choice,
  signal: AbortSignal,
  emit: Emit,
  log: WorkerLog,
  progress: { started: boolean },
): Promise<void> => {
  const { model } = request;
  const { controller, stalled, release } = attemptController(signal, model);
  /** The stall timer: started once, restarted (`refresh`) by every event. */
  let timer: NodeJS.Timeout | undefined;
  const forward = (event: LlmEvent) => {
    if (STARTED.has(event.type)) progress.started = true;
    emit(event);
  };
  const isText = protocol === 'text';
  const recovered = new RecoveredStream(
    recoveryOptions(model, request.tools, protocol, newId, hint),
  );
  try {
    const provider = await PROVIDERS[model.provider]();
    // After loading the client library: the timer is about the server.
    timer = setTimeout(stalled, model.stallTimeoutMs);
    const events = provider({
      spec: model,
      messages: isText ? applyTextProtocol(request.messages, request.tools) : request.messages,
      tools: isText ? [] : request.tools,
      signal: controller.signal,
      log,
      newId,
    });
    for await (const event of events) {
      timer.refresh();
      if (relay(event, recovered, protocol, emit, forward, controller)) return;
    }
    controller.signal.throwIfAborted();
    throw new LlmFailure(
      'llm-stream',
      `the stream from ${model.baseUrl} ended before the reply finished`,
      {
        retryable: true,
      },
    );
  } catch (error) {
    // What was shown stands; what was held back with it goes out. Before that, a retry redoes all.
    if (progress.started) for (const e of recovered.abandon()) forward(e);
    throw error;
  } finally {
    clearTimeout(timer);
    release();
  }
};

const withRetries = async (
  request: StreamRequest,
  choice: Choice,
  signal: AbortSignal,
  emit: Emit,
  log: WorkerLog,
): Promise<void> => {
  const { model } = request;
  for (let attempt = 0; ; attempt++) {
    const progress = { started: false };
    try {
      await runAttempt(request, choice, signal, emit, log, progress);
      return;
    } catch (error) {
      const failure = classify(signal.aborted ? signal.reason : error, model);
      const { retryable, retryAfterMs } = failure.options;
      if (signal.aborted || progress.started || !retryable || attempt >= model.retry.maxRetries)
        throw failure;
      const delayMs = backoffDelay(attempt, model.retry, retryAfterMs);
      log('info', 'retrying', {
        model: model.name,
        attempt: attempt + 1,
        delayMs,
        reason: failure.message,
      });
      emit({
        type: 'retry',
        attempt: attempt + 1,
        delayMs,
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
        reason: failure.message,
      });
      await sleep(delayMs, signal);
    }
  }
};

/**
 * How `request` goes before anything is sent: the text protocol when asked for; under `auto`, for
 * Ollama, what `/api/show` says the model can do (once per model), said in a `tool-protocol`
 * event when it is the text protocol.
 */
const choose = async (
  request: StreamRequest,
  signal: AbortSignal,
  emit: Emit,
  log: WorkerLog,
): Promise<Choice> => {
  const { model } = request;
  const hasTools = request.tools.length > 0;
  if (!hasTools) return { protocol: 'native' };
  if (model.toolProtocol === 'text') return { protocol: 'text' };
  if (model.toolProtocol !== 'auto' || model.provider !== 'ollama') return { protocol: 'native' };
  const decision = await ollamaDecision(model, signal);
  log('debug', 'tool protocol from /api/show', { model: model.name, ...decision });
  const hint = decision.family ? { hint: decision.family } : {};
  if (decision.protocol !== 'text') return { protocol: 'native', ...hint };
  emit({ type: 'tool-protocol', protocol: 'text', reason: decision.reason });
  return { protocol: 'text', ...hint };
};

/**
 * Runs one stream request: events, then exactly one `done` or `error`. Never throws. Under
 * `auto`, a server that says the model has no tools gets the request again in the text protocol.
 */
export const runStream = async (
  request: StreamRequest,
  signal: AbortSignal,
  emit: Emit,
  log: WorkerLog,
): Promise<void> => {
  const { model } = request;
  const hasTools = request.tools.length > 0;
  try {
    const choice = await choose(request, signal, emit, log);
    try {
      await withRetries(request, choice, signal, emit, log);
    } catch (error) {
      const failure = classify(error, model);
      const fallback = model.toolProtocol === 'auto' && hasTools && choice.protocol === 'native';
      if (!(fallback && failure.options.noToolSupport)) throw failure;
      log('info', 'no native tools; using the text tool protocol', { model: model.name });
      emit({ type: 'tool-protocol', protocol: 'text', reason: failure.message });
      await withRetries(request, { ...choice, protocol: 'text' }, signal, emit, log);
    }
  } catch (error) {
    emit({
      type: 'error',
      error: classify(signal.aborted ? signal.reason : error, model).toWire(),
    });
  }
};

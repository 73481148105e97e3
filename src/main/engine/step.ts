import type { LlmEvent, StreamRequest, ToolCall, Usage } from '../../workers/protocol/api.ts';
import type { ToolTable, TurnIO } from './tool-calls.ts';

/** The API worker as the loop sees it. */
export interface LlmStreamer {
  stream(request: StreamRequest, signal: AbortSignal): AsyncIterable<LlmEvent>;
}

export const zeroUsage = (): Usage => ({ inputTokens: 0, outputTokens: 0 });

export const addUsage = (a: Usage, b: Usage): Usage => ({
  inputTokens: a.inputTokens + b.inputTokens,
  outputTokens: a.outputTokens + b.outputTokens,
  ...(a.cacheReadTokens !== undefined || b.cacheReadTokens !== undefined
    ? { cacheReadTokens: (a.cacheReadTokens ?? 0) + (b.cacheReadTokens ?? 0) }
    : {}),
  ...(a.reasoningTokens !== undefined || b.reasoningTokens !== undefined
    ? { reasoningTokens: (a.reasoningTokens ?? 0) + (b.reasoningTokens ?? 0) }
    : {}),
});

/** What one request to the model brought back. */
export interface StepResult {
  text: string;
  reasoning: string;
  calls: ToolCall[];
  /** Calls whose arguments could not be read, by id: what to tell the model. */
  invalid: Map<string, string>;
  usage: Usage;
  cancelled: boolean;
}

/** Streams one request, passing text, reasoning, calls and retries on to the front-end. */
export const streamStep = async (
  api: LlmStreamer,
  request: StreamRequest,
  table: ToolTable,
  io: TurnIO,
  signal: AbortSignal,
  taken: Set<string> = new Set(),
): Promise<StepResult> => {
  const step: StepResult = {
    text: '',
    reasoning: '',
    calls: [],
    invalid: new Map(),
    usage: zeroUsage(),
    cancelled: false,
  };
  try {
    for await (const event of api.stream(request, signal))
      onEvent(unique(event, taken), step, request, table, io);
  } catch (error) {
    if (!signal.aborted) throw error;
    return { ...step, cancelled: true };
  }
  return { ...step, cancelled: signal.aborted };
};

/**
 * `event` with its call id made unique among `taken` (the session's ids so far, added to): some
 * servers number calls per reply (`call_1` every time), and a compaction marker, the transcript
 * and the front-end tell outputs apart by id.
 */
const unique = (event: LlmEvent, taken: Set<string>): LlmEvent => {
  const id =
    event.type === 'tool-call'
      ? event.call.id
      : event.type === 'tool-call-invalid'
        ? event.id
        : undefined;
  if (id === undefined) return event;
  let fresh = id;
  for (let n = 2; taken.has(fresh); n++) fresh = `${id}_${n}`;
  taken.add(fresh);
  if (fresh === id) return event;
  return event.type === 'tool-call'
    ? { ...event, call: { ...event.call, id: fresh } }
    : ({ ...event, id: fresh } as LlmEvent);
};

const onEvent = (
  event: LlmEvent,
  step: StepResult,
  request: StreamRequest,
  table: ToolTable,
  io: TurnIO,
): void => {
  switch (event.type) {
    case 'text':
      step.text += event.text;
      io.emit({ type: 'text', text: event.text });
      break;
    case 'reasoning':
      step.reasoning += event.text;
      io.emit({ type: 'reasoning', text: event.text });
      break;
    case 'tool-call': {
      step.calls.push(event.call);
      const server = table.get(event.call.name)?.server;
      io.emit({
        type: 'tool-call',
        id: event.call.id,
        name: event.call.name,
        args: event.call.args,
        ...(server ? { server } : {}),
      });
      break;
    }
    case 'tool-call-invalid':
      step.calls.push({ id: event.id, name: event.name, args: {} });
      step.invalid.set(
        event.id,
        `your call to ${event.name} could not be read: ${event.message}. Write the call again with valid JSON arguments.`,
      );
      io.emit({ type: 'tool-call', id: event.id, name: event.name, args: {} });
      break;
    case 'usage':
      step.usage = addUsage(step.usage, event.usage);
      break;
    case 'retry':
      io.emit({
        type: 'retry',
        attempt: event.attempt,
        delayMs: event.delayMs,
        reason: event.reason,
      });
      break;
    case 'tool-protocol':
      io.emit({
        type: 'notice',
        level: 'info',
        text: `${request.model.name}: ${event.reason}; using the text tool protocol`,
      });
      break;
    case 'done':
    case 'error':
      break;
  }
};

/** True for a provider's refusal of a prompt longer than the model's window. */
export const isContextOverflow = (error: unknown): boolean =>
  /maximum context length|context[ _-]length|prompt is too long|context window|too many tokens|exceeds? the (?:model's )?(?:maximum )?context/i.test(
    error instanceof Error ? error.message : String(error),
  );

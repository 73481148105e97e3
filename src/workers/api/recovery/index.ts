import type { LlmEvent, ToolCallFamily, ToolCallFormat, ToolSpec } from '../../protocol/api.ts';
import { Driver } from './driver.ts';
import { familiesFor } from './registry.ts';

// Text tool-call recovery, as the stream reader uses it: feed it the text a model streams, get
// back text, reasoning and calls — whichever way the model wrote them.

export interface RecoveryOptions {
  /** The tools offered in this request: only these can be called. */
  tools: readonly ToolSpec[];
  /** `models.<name>.toolCallFormat` (default `auto`). */
  format?: ToolCallFormat;
  /** Whether the model was taught the `TOOL_CALL:` protocol for this request. */
  protocol: 'native' | 'text';
  /** A family to try first under `auto` (what the server's template says the model writes). */
  hint?: ToolCallFamily;
  /** Names each call (text has no ids). */
  newId: () => string;
  /**
   * `reasoning`: the text of a reasoning channel. What it finds is reasoning; a call in it counts
   * only when the reply ends with it (`finish(true)`), as when a server misfiles a call there.
   */
  channel?: 'content' | 'reasoning';
}

export interface Recovery {
  feed(chunk: string): LlmEvent[];
  /** The stream ended; `commit` (default true): calls still waiting for the end count. */
  finish(commit?: boolean): LlmEvent[];
  /** The stream failed: held-back plain text, never call syntax. */
  abandon(): LlmEvent[];
  /** Calls were read and what follows is not the answer: end the stream. */
  readonly stopped: boolean;
  /** Calls that went out (unreadable `TOOL_CALL:`s included). */
  readonly calls: number;
  /** Whether it let any text but white space through. */
  readonly spoke: boolean;
}

export const createRecovery = (options: RecoveryOptions): Recovery =>
  new Driver({
    families: familiesFor(options.format ?? 'auto', options.protocol, options.hint),
    tools: options.tools,
    protocol: options.protocol,
    newId: options.newId,
    channel: options.channel ?? 'content',
  });

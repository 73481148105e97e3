import type { ToolCall } from '../../workers/protocol/api.ts';
import { resultText, type ToolResult } from '../../workers/protocol/tool-result.ts';
import type { HookEvent } from '../config/schema.ts';
import type { LoadedConfig } from '../config/load.ts';
import type { CallHooks, PreCall, ToolEntry, TurnIO } from '../engine/tool-calls.ts';
import { toolAliases } from './claude-names.ts';
import type { CommandRunner } from './expand.ts';
import { runHooks, type HookVerdict } from './hooks.ts';

/** What a session's hooks need: who it is, where its transcript is, the config, a runner. */
export interface HookContext {
  sessionId: string;
  transcriptPath: string;
  root: string;
  config: () => LoadedConfig;
  run: CommandRunner;
}

/** Tool results given to PostToolUse hooks are cut to this many characters. */
const RESULT_CHARS = 16 * 1024;

/** Whether any layer has hooks for `event` (calls without hooks cost nothing). */
const hasHooks = (config: LoadedConfig, event: HookEvent): boolean =>
  config.hooks.some((layer) => (layer.hooks[event]?.length ?? 0) > 0);

/**
 * The PreToolUse and PostToolUse hooks of calls — a session's turn, or a gateway client's — with
 * the input Claude Code's hooks read; `warn` says what failed. Undefined when there are none.
 */
export const toolCallHooks = (
  ctx: HookContext,
  signal: AbortSignal,
  warn: (text: string) => void,
): CallHooks | undefined => {
  const config = ctx.config();
  if (!hasHooks(config, 'PreToolUse') && !hasHooks(config, 'PostToolUse')) return undefined;
  const names = (call: ToolCall, entry: Pick<ToolEntry, 'kind'>) =>
    toolAliases(call.name, entry.kind);
  const run = async (event: HookEvent, target: string[], fields: Record<string, unknown>) => {
    if (!hasHooks(ctx.config(), event)) return { context: [], warnings: [] } as HookVerdict;
    const verdict = await runHooks({
      layers: ctx.config().hooks,
      event,
      target,
      input: {
        session_id: ctx.sessionId,
        transcript_path: ctx.transcriptPath,
        cwd: ctx.root,
        hook_event_name: event,
        ...fields,
      },
      root: ctx.root,
      run: ctx.run,
      signal,
    });
    for (const text of verdict.warnings) warn(text);
    return verdict;
  };
  return {
    before: async (call, entry): Promise<PreCall> => {
      const fields = { tool_name: call.name, tool_input: call.args };
      const v = await run('PreToolUse', names(call, entry), fields);
      return {
        ...(v.block ? { block: v.block } : {}),
        ...(v.allow ? { allow: v.allow } : {}),
        ...(v.ask ? { ask: v.ask } : {}),
        ...(v.updatedInput ? { args: v.updatedInput } : {}),
      };
    },
    after: async (call, entry, result): Promise<ToolResult> => {
      const response = { ...result, output: resultText(result).slice(0, RESULT_CHARS) };
      const fields = { tool_name: call.name, tool_input: call.args, tool_response: response };
      const v = await run('PostToolUse', names(call, entry), fields);
      const notes = [...(v.block ? [`A PostToolUse hook says: ${v.block}`] : []), ...v.context];
      if (notes.length === 0) return result;
      const extra = `\n\n[${notes.join('\n')}]`;
      return result.ok
        ? { ...result, output: `${result.output}${extra}` }
        : { ...result, output: `${result.output ?? ''}${extra}` };
    },
  };
};

/**
 * The hook points of one session: it runs each event's hooks with the input Claude Code's
 * hooks read (snake_case fields), says their warnings, and turns their verdicts into what the
 * turn does. Nothing here throws for a hook that fails.
 */
export class SessionHooks {
  #started = false;
  /** What SessionStart hooks gave for the model: part of the system prompt from then on. */
  context: string[] = [];

  constructor(private readonly ctx: HookContext) {}

  /** Whether any layer has hooks for `event` (a turn without hooks costs nothing). */
  has(event: HookEvent): boolean {
    return hasHooks(this.ctx.config(), event);
  }

  async #run(
    event: HookEvent,
    target: readonly string[],
    fields: Record<string, unknown>,
    io: TurnIO | undefined,
    signal: AbortSignal,
  ): Promise<HookVerdict> {
    if (!this.has(event)) return { context: [], warnings: [] };
    const verdict = await runHooks({
      layers: this.ctx.config().hooks,
      event,
      target,
      input: {
        session_id: this.ctx.sessionId,
        transcript_path: this.ctx.transcriptPath,
        cwd: this.ctx.root,
        hook_event_name: event,
        ...fields,
      },
      root: this.ctx.root,
      run: this.ctx.run,
      signal,
    });
    for (const text of verdict.warnings) io?.emit({ type: 'notice', level: 'warn', text });
    return verdict;
  }

  /** SessionStart, once per session in this daemon (`startup`, or `resume` for an old one). */
  async start(resumed: boolean, io: TurnIO, signal: AbortSignal): Promise<void> {
    if (this.#started) return;
    this.#started = true;
    const source = resumed ? 'resume' : 'startup';
    const verdict = await this.#run('SessionStart', [source], { source }, io, signal);
    this.context.push(...verdict.context);
  }

  /** UserPromptSubmit: the prompt as sent (with what hooks added), or why it was blocked. */
  async prompt(
    text: string,
    io: TurnIO,
    signal: AbortSignal,
  ): Promise<{ text: string; block?: string }> {
    const verdict = await this.#run('UserPromptSubmit', [], { prompt: text }, io, signal);
    if (verdict.block) return { text, block: verdict.block };
    const extra = verdict.context.length
      ? `\n\n<hook-context>\n${verdict.context.join('\n')}\n</hook-context>`
      : '';
    return { text: `${text}${extra}` };
  }

  /** PreToolUse and PostToolUse, for `runToolCalls`. */
  calls(io: TurnIO, signal: AbortSignal): CallHooks | undefined {
    return toolCallHooks(this.ctx, signal, (text) =>
      io.emit({ type: 'notice', level: 'warn', text }),
    );
  }

  /** Stop: a reason to keep going when a hook blocks the model from stopping. */
  async stop(active: boolean, io: TurnIO, signal: AbortSignal): Promise<string | undefined> {
    const verdict = await this.#run('Stop', [], { stop_hook_active: active }, io, signal);
    return verdict.block;
  }

  /** PreCompact (`manual` for /compact, `auto` when the context is full). */
  async preCompact(trigger: 'manual' | 'auto', io: TurnIO, signal: AbortSignal): Promise<void> {
    await this.#run('PreCompact', [trigger], { trigger, custom_instructions: '' }, io, signal);
  }

  /** SessionEnd, once, after a session that started (its front-end went, or the daemon stops). */
  async end(reason: string): Promise<void> {
    if (!this.#started) return;
    this.#started = false;
    const signal = AbortSignal.timeout(120_000);
    await this.#run('SessionEnd', [reason], { reason }, undefined, signal);
  }
}

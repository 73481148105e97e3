import type { ToolCall } from '../../workers/protocol/api.ts';
import { resultText, type ToolResult } from '../../workers/protocol/tool-result.ts';
import type { HookEvent } from '../config/hook-events.ts';
import type { LoadedConfig } from './workspace-config.ts';
import type { CallHooks, PreCall, TurnIO } from '../calls/types.ts';
import {
  claudeToolName,
  fromClaudeInput,
  toClaudeInput,
  toClaudeResponse,
  toolAliases,
} from './claude-names.ts';
import type { CommandRunner } from './expand.ts';
import { runHooks, type HookDialect, type HookSubject, type HookVerdict } from './hooks.ts';
import { SessionEnv } from '../threads/session-env.ts';

/** What a session's hooks need: who it is, where its transcript is, the config, a runner. */
interface HookContext {
  sessionId: string;
  transcriptPath: string;
  root: string;
  config: () => LoadedConfig;
  run: CommandRunner;
  /** A subagent's session: its profile and its parent's id (it fires SubagentStart/Stop). */
  subagent?: () => { agent: string; parentId?: string } | undefined;
}

/** Tool results given to PostToolUse hooks are cut to this many characters. */
const RESULT_CHARS = 16 * 1024;

/** Whether any layer has hooks for `event` (calls without hooks cost nothing). */
const hasHooks = (config: LoadedConfig, event: HookEvent): boolean =>
  config.hooks.some((layer) => (layer.hooks[event]?.length ?? 0) > 0);

/** The fields every event's input has. */
const common = (ctx: HookContext) => ({
  session_id: ctx.sessionId,
  transcript_path: ctx.transcriptPath,
  cwd: ctx.root,
});

/**
 * A tool event's subject in each dialect: niffler's hooks see niffler's tool name and arguments
 * (their matchers may use Claude Code's names too); Claude Code's see its name (`Bash`,
 * `mcp__server__tool`) and fields (`file_path`, `old_string`…). `if` rules read Claude Code's.
 */
const toolSubject =
  (ctx: HookContext, call: ToolCall, kind: string, extra: (d: HookDialect) => object) =>
  (dialect: HookDialect): HookSubject => {
    const claudeName = claudeToolName(call.name, kind);
    const claudeInput = toClaudeInput(call.name, call.args, ctx.root);
    const rule = { input: claudeInput, root: ctx.root };
    if (dialect === 'niffler') {
      const names = toolAliases(call.name, kind);
      const fields = { tool_name: call.name, tool_input: call.args, ...extra(dialect) };
      return { target: names, fields, call: { ...rule, names } };
    }
    const fields = {
      tool_name: claudeName,
      tool_input: claudeInput,
      tool_use_id: call.id,
      ...extra(dialect),
    };
    return { target: [claudeName], fields, call: { ...rule, names: [claudeName] } };
  };

/** A result with what hooks said after it, for the model. */
const withNotes = (result: ToolResult, notes: readonly string[]): ToolResult => {
  if (notes.length === 0) return result;
  const extra = `\n\n[${notes.join('\n')}]`;
  return result.ok
    ? { ...result, output: `${result.output}${extra}` }
    : { ...result, output: `${result.output ?? ''}${extra}` };
};

/**
 * What PostToolUse hooks read of a result (`tool_response`, in Claude Code's shape for its
 * hooks), or PostToolUseFailure hooks of a failure (`error`, `is_interrupt`).
 */
const afterFields = (call: ToolCall, result: ToolResult, root: string) => {
  const output = resultText(result).slice(0, RESULT_CHARS);
  if (!result.ok) return () => ({ error: output, is_interrupt: result.error.code === 'canceled' });
  const response = { ...result, output };
  return (d: HookDialect) => ({
    tool_response:
      d === 'claude' ? toClaudeResponse(call.name, call.args, response, root) : response,
  });
};

/**
 * The PreToolUse, PostToolUse and PostToolUseFailure hooks of calls — a session's turn, or a
 * gateway client's — each layer's in its own names; `warn` says what failed. Undefined when
 * there are none.
 */
export const toolCallHooks = (
  ctx: HookContext,
  signal: AbortSignal,
  warn: (text: string) => void,
  status?: (text: string) => void,
): CallHooks | undefined => {
  const config = ctx.config();
  const events: HookEvent[] = ['PreToolUse', 'PostToolUse', 'PostToolUseFailure'];
  if (!events.some((event) => hasHooks(config, event))) return undefined;
  /** PreToolUse's `additionalContext`, given with the call's result. */
  const before = new Map<string, string[]>();
  const run = async (
    event: HookEvent,
    call: ToolCall,
    kind: string,
    extra: (dialect: HookDialect) => object = () => ({}),
  ) => {
    if (!hasHooks(ctx.config(), event)) return { context: [], warnings: [] } as HookVerdict;
    const verdict = await runHooks({
      layers: ctx.config().hooks,
      event,
      common: common(ctx),
      subject: toolSubject(ctx, call, kind, extra),
      fromClaude: (input) => fromClaudeInput(call.name, input),
      root: ctx.root,
      run: ctx.run,
      signal,
      ...(status ? { status } : {}),
    });
    for (const text of verdict.warnings) warn(text);
    return verdict;
  };
  return {
    before: async (call, entry): Promise<PreCall> => {
      const v = await run('PreToolUse', call, entry.kind);
      if (v.context.length) before.set(call.id, v.context);
      return {
        ...(v.block ? { block: v.block } : {}),
        ...(v.allow ? { allow: v.allow } : {}),
        ...(v.ask ? { ask: v.ask } : {}),
        ...(v.updatedInput ? { args: v.updatedInput } : {}),
      };
    },
    after: async (call, entry, result): Promise<ToolResult> => {
      const earlier = before.get(call.id) ?? [];
      before.delete(call.id);
      const event = result.ok ? 'PostToolUse' : 'PostToolUseFailure';
      const v = await run(event, call, entry.kind, afterFields(call, result, ctx.root));
      const said = v.block ? [`A ${event} hook says: ${v.block}`] : [];
      return withNotes(result, [...earlier, ...said, ...v.context]);
    },
  };
};

/**
 * The hook points of one session: it runs each event's hooks with the input Claude Code's
 * hooks read (snake_case fields), says their warnings, and turns their verdicts into what the
 * turn does. A subagent's session fires SubagentStart and SubagentStop where a session fires
 * SessionStart and Stop (and no UserPromptSubmit: its prompt is the model's). Nothing here
 * throws for a hook that fails.
 */
export class SessionHooks {
  #started = false;
  /** What SessionStart hooks gave for the model: part of the system prompt from then on. */
  context: string[] = [];
  readonly #env: SessionEnv;

  constructor(private readonly ctx: HookContext) {
    this.#env = new SessionEnv(ctx.sessionId);
  }

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
    env?: { vars: Record<string, string>; writable: string[] },
  ): Promise<HookVerdict> {
    if (!this.has(event)) return { context: [], warnings: [] };
    const verdict = await runHooks({
      layers: this.ctx.config().hooks,
      event,
      common: common(this.ctx),
      subject: () => ({ target, fields }),
      root: this.ctx.root,
      run: this.ctx.run,
      signal,
      ...(env ? { env: env.vars, writable: env.writable } : {}),
      ...(io ? { status: (text: string) => io.emit({ type: 'notice', level: 'info', text }) } : {}),
    });
    for (const text of verdict.warnings) io?.emit({ type: 'notice', level: 'warn', text });
    return verdict;
  }

  /**
   * SessionStart, once per session in this daemon (`startup`, or `resume` for an old one), with
   * a fresh `CLAUDE_ENV_FILE` whose exports hold for the session's bash calls from then on; for
   * a subagent, SubagentStart (matched on its profile), which starts from its parent's variables.
   */
  async start(resumed: boolean, io: TurnIO, signal: AbortSignal): Promise<void> {
    if (this.#started) return;
    this.#started = true;
    const child = this.ctx.subagent?.();
    const env = this.has('SessionStart') || child ? this.#env.prepare(child?.parentId) : undefined;
    if (child) {
      const fields = { agent_id: this.ctx.sessionId, agent_type: child.agent };
      const verdict = await this.#run('SubagentStart', [child.agent], fields, io, signal);
      this.context.push(...verdict.context);
      return;
    }
    const source = resumed ? 'resume' : 'startup';
    const verdict = await this.#run('SessionStart', [source], { source }, io, signal, env);
    this.context.push(...verdict.context);
  }

  /** UserPromptSubmit: the prompt as sent (with what hooks added), or why it was blocked. */
  async prompt(
    text: string,
    io: TurnIO,
    signal: AbortSignal,
  ): Promise<{ text: string; block?: string }> {
    if (this.ctx.subagent?.()) return { text };
    const verdict = await this.#run('UserPromptSubmit', [], { prompt: text }, io, signal);
    if (verdict.block) return { text, block: verdict.block };
    const extra = verdict.context.length
      ? `\n\n<hook-context>\n${verdict.context.join('\n')}\n</hook-context>`
      : '';
    return { text: `${text}${extra}` };
  }

  /** PreToolUse, PostToolUse and PostToolUseFailure, for `runToolCalls`. */
  calls(io: TurnIO, signal: AbortSignal): CallHooks | undefined {
    return toolCallHooks(
      this.ctx,
      signal,
      (text) => io.emit({ type: 'notice', level: 'warn', text }),
      (text) => io.emit({ type: 'notice', level: 'info', text }),
    );
  }

  /** Whether the hooks that run as this session stops exist (Stop, or a subagent's SubagentStop). */
  hasStop(): boolean {
    return this.has(this.ctx.subagent?.() ? 'SubagentStop' : 'Stop');
  }

  /** Stop (SubagentStop for a subagent): a reason to keep going when a hook blocks the stop. */
  async stop(active: boolean, io: TurnIO, signal: AbortSignal): Promise<string | undefined> {
    const child = this.ctx.subagent?.();
    const verdict = child
      ? await this.#run(
          'SubagentStop',
          [child.agent],
          {
            stop_hook_active: active,
            agent_id: this.ctx.sessionId,
            agent_type: child.agent,
            agent_transcript_path: this.ctx.transcriptPath,
          },
          io,
          signal,
        )
      : await this.#run('Stop', [], { stop_hook_active: active }, io, signal);
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
    if (!this.ctx.subagent?.())
      await this.#run('SessionEnd', [reason], { reason }, undefined, signal);
    this.#env.remove();
  }
}

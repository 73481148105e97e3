import type { HookEvent, HooksConfig } from '../config/schema.ts';
import type { CommandOutcome } from '../../workers/protocol/tools.ts';
import { isObject } from '../../workers/shared/is-object.ts';
import type { CommandRunner } from './expand.ts';

/** One file's (or flag's) hooks. */
export interface HookLayer {
  source: string;
  hooks: HooksConfig;
}

/** Bytes of a hook's stdout and of its stderr kept. */
const HOOK_OUTPUT = 64 * 1024;

/** What the hooks of one event decided, and what to tell. */
export interface HookVerdict {
  /** A hook blocked (exit 2, or `decision: block|deny`): the reason, for the model. */
  block?: string;
  /** PreToolUse: a hook allowed the call without asking (a config deny still wins). */
  allow?: string;
  /** PreToolUse: a hook wants the user asked, whatever the policy says. */
  ask?: string;
  /** Text for the model (`additionalContext`, or plain stdout of prompt and start hooks). */
  context: string[];
  /** PreToolUse: the arguments to call with instead. */
  updatedInput?: Record<string, unknown>;
  /** Hooks that failed (timed out, flooded, died, exited otherwise, printed bad JSON). */
  warnings: string[];
}

/** Whether a matcher selects `names` (a tool's names); no matcher, `*` or `` selects all. */
export const matcherSelects = (matcher: string | undefined, names: readonly string[]): boolean => {
  if (!matcher || matcher === '*') return true;
  try {
    const pattern = new RegExp(`^(?:${matcher})$`);
    return names.some((n) => pattern.test(n));
  } catch {
    return names.includes(matcher);
  }
};

const short = (command: string) => (command.length > 60 ? `${command.slice(0, 57)}...` : command);

/** How a hook's ending reads when it did not end well; undefined when it exited 0 or 2. */
const failure = (outcome: CommandOutcome, timeout: number): string | undefined => {
  if (outcome.ended === 'timeout') return `timed out after ${timeout}s and was ended`;
  if (outcome.ended === 'flood') return 'printed far more than is read and was ended';
  if (outcome.ended === 'canceled') return 'was cancelled';
  if (outcome.signal) return `died of ${outcome.signal}`;
  if (outcome.exitCode !== 0 && outcome.exitCode !== 2) {
    const tail = outcome.stderr.trim().split('\n').slice(-3).join(' | ');
    return `exited ${outcome.exitCode}${tail ? `: ${tail.slice(0, 300)}` : ''}`;
  }
  return undefined;
};

/** Reads the JSON a hook printed into `verdict` (Claude Code's fields, which Codex's and Gemini CLI's hooks print too). */
const readDecision = (
  json: Record<string, unknown>,
  verdict: HookVerdict,
  event: HookEvent,
): void => {
  const specific = isObject(json['hookSpecificOutput']) ? json['hookSpecificOutput'] : {};
  const reason =
    [json['reason'], specific['permissionDecisionReason'], json['stopReason']].find(
      (r): r is string => typeof r === 'string' && r.length > 0,
    ) ?? 'a hook decided so';
  const decision = specific['permissionDecision'] ?? json['decision'];
  // `continue: false` stops what the event is about; for Stop that is what happens anyway.
  const halt = json['continue'] === false && event !== 'Stop';
  if (decision === 'block' || decision === 'deny' || halt) verdict.block ??= reason;
  else if (decision === 'approve' || decision === 'allow') verdict.allow ??= reason;
  else if (decision === 'ask') verdict.ask ??= reason;
  const context = specific['additionalContext'] ?? json['additionalContext'];
  if (typeof context === 'string' && context.trim()) verdict.context.push(context.trim());
  const updated = specific['updatedInput'] ?? json['updatedInput'];
  if (isObject(updated)) verdict.updatedInput = updated;
  if (typeof json['systemMessage'] === 'string') verdict.warnings.push(json['systemMessage']);
};

/** Folds one hook's outcome into the verdict of its event. */
const judge = (
  event: HookEvent,
  command: string,
  timeout: number,
  outcome: CommandOutcome,
  verdict: HookVerdict,
): void => {
  const name = `${event} hook \`${short(command)}\``;
  const failed = failure(outcome, timeout);
  if (failed) return void verdict.warnings.push(`${name} ${failed}; going on without it`);
  if (outcome.exitCode === 2) {
    verdict.block ??= outcome.stderr.trim() || `blocked by the ${name}`;
    return;
  }
  const text = outcome.stdout.trim();
  if (!text) return;
  if (text.startsWith('{')) {
    try {
      const json: unknown = JSON.parse(text);
      if (isObject(json)) return readDecision(json, verdict, event);
    } catch {
      // Reported below.
    }
    verdict.warnings.push(
      `${name} printed invalid JSON (${outcome.cut ? 'cut at 64 KiB' : text.slice(0, 80)}); its output is ignored`,
    );
    return;
  }
  // Plain text on stdout is context for the model where the event has a prompt to add to.
  if (event === 'UserPromptSubmit' || event === 'SessionStart') verdict.context.push(text);
};

/** What running the hooks of one event needs. */
export interface HookRun {
  layers: readonly HookLayer[];
  event: HookEvent;
  /** The names the matcher is tested against (a tool's names, a start's source). */
  target: readonly string[];
  /** The JSON on their stdin. */
  input: Record<string, unknown>;
  root: string;
  run: CommandRunner;
  signal: AbortSignal;
}

/**
 * Runs the hooks of `event` whose matchers select the target, side by side, each in bash's
 * sandbox with its own timeout and capped output, and folds what they said into one verdict.
 * Never throws: a hook that fails is a warning, and decides nothing.
 */
export const runHooks = async (options: HookRun): Promise<HookVerdict> => {
  const verdict: HookVerdict = { context: [], warnings: [] };
  const commands = options.layers.flatMap((layer) =>
    (layer.hooks[options.event] ?? [])
      .filter((m) => matcherSelects(m.matcher, options.target))
      .flatMap((m) => m.hooks),
  );
  if (commands.length === 0) return verdict;
  const input = JSON.stringify(options.input);
  const env = { NIFFLER_PROJECT_DIR: options.root, CLAUDE_PROJECT_DIR: options.root };
  const outcomes = await Promise.all(
    commands.map(async (hook) => {
      const timeout = hook.timeout ?? 60;
      const spec = {
        command: hook.command,
        input,
        timeoutSeconds: timeout,
        maxOutputBytes: HOOK_OUTPUT,
        env,
      };
      return { hook, timeout, outcome: await options.run(spec, options.signal) };
    }),
  );
  for (const { hook, timeout, outcome } of outcomes) {
    if ('ok' in outcome) {
      const why = outcome.ok ? 'no outcome' : outcome.error.message;
      verdict.warnings.push(
        `${options.event} hook \`${short(hook.command)}\` could not run: ${why}`,
      );
      continue;
    }
    judge(options.event, hook.command, timeout, outcome, verdict);
  }
  return verdict;
};

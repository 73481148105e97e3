import type { HookEvent } from '../config/hook-events.ts';
import type { HookDialect, HookLayer } from '../config/load.ts';
import type { HookHandler } from '../config/schema.ts';
import type { CommandOutcome, CommandSpec } from '../../workers/protocol/tools.ts';
import { isObject } from '../../workers/shared/is-object.ts';
import type { CommandRunner } from './expand.ts';
import { handlerLine, matcherSelects, ruleSelects, type RuleCall } from './hook-match.ts';

export type { HookDialect } from '../config/load.ts';

/** Bytes of a hook's stdout and of its stderr kept. */
const HOOK_OUTPUT = 64 * 1024;
/** Seconds a hook may run at most, whatever its `timeout` says. */
const MAX_TIMEOUT = 3600;

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
  /** PreToolUse: the arguments to call with instead, in niffler's names. */
  updatedInput?: Record<string, unknown>;
  /** Hooks that failed (timed out, flooded, died, exited otherwise, printed bad JSON). */
  warnings: string[];
}

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

/** One hook as it ran: what it is, whose names it speaks, and how it ended. */
interface Ran {
  event: HookEvent;
  line: string;
  timeout: number;
  outcome: CommandOutcome;
  /** A Claude Code hook's `updatedInput` in niffler's names. */
  mapInput: (input: Record<string, unknown>) => Record<string, unknown>;
}

/** Reads the JSON a hook printed into `verdict` (Claude Code's fields, which Codex's hooks print too). */
const readDecision = (json: Record<string, unknown>, verdict: HookVerdict, ran: Ran): void => {
  const specific = isObject(json['hookSpecificOutput']) ? json['hookSpecificOutput'] : {};
  const reason =
    [json['reason'], specific['permissionDecisionReason'], json['stopReason']].find(
      (r): r is string => typeof r === 'string' && r.length > 0,
    ) ?? 'a hook decided so';
  const decision = specific['permissionDecision'] ?? json['decision'];
  // `continue: false` stops what the event is about; for Stop that is what happens anyway.
  const halt = json['continue'] === false && ran.event !== 'Stop';
  if (decision === 'block' || decision === 'deny' || halt) verdict.block ??= reason;
  else if (decision === 'approve' || decision === 'allow') verdict.allow ??= reason;
  else if (decision === 'ask') verdict.ask ??= reason;
  const context = specific['additionalContext'] ?? json['additionalContext'];
  if (typeof context === 'string' && context.trim()) verdict.context.push(context.trim());
  const updated = specific['updatedInput'] ?? json['updatedInput'];
  if (isObject(updated)) verdict.updatedInput = ran.mapInput(updated);
  if (typeof json['systemMessage'] === 'string') verdict.warnings.push(json['systemMessage']);
};

/** The JSON object a hook printed, if its stdout is one. */
const printedJson = (text: string): Record<string, unknown> | 'invalid' | undefined => {
  if (!text.startsWith('{')) return undefined;
  try {
    const json: unknown = JSON.parse(text);
    return isObject(json) ? json : 'invalid';
  } catch {
    return 'invalid';
  }
};

/**
 * Folds one hook's outcome into the verdict of its event, as Claude Code's hooks reference says:
 * exit 2 blocks with stderr as the reason (stdout and any JSON in it ignored); another failure is
 * a warning that decides nothing; on exit 0 a JSON object decides, and plain text is context
 * where the event has a prompt to add to.
 */
const judge = (ran: Ran, verdict: HookVerdict): void => {
  const { outcome } = ran;
  const name = `${ran.event} hook \`${short(ran.line)}\``;
  const failed = failure(outcome, ran.timeout);
  if (failed) return void verdict.warnings.push(`${name} ${failed}; going on without it`);
  if (outcome.exitCode === 2) {
    verdict.block ??= outcome.stderr.trim() || `blocked by the ${name}`;
    return;
  }
  const text = outcome.stdout.trim();
  const json = printedJson(text);
  if (isObject(json)) return readDecision(json, verdict, ran);
  if (json === 'invalid')
    return void verdict.warnings.push(
      `${name} printed invalid JSON (${outcome.cut ? 'cut at 64 KiB' : text.slice(0, 80)}); its output is ignored`,
    );
  const adds = ['UserPromptSubmit', 'SessionStart', 'SubagentStart'].includes(ran.event);
  if (text && adds) verdict.context.push(text);
};

/** What the hooks of one event see, in one layer's names. */
export interface HookSubject {
  /** The names the matcher is tested against (a tool's names, a start's source). */
  target: readonly string[];
  /** The event's own fields of the JSON on their stdin. */
  fields: Record<string, unknown>;
  /** A tool event's call, for handlers' `if` rules. */
  call?: RuleCall;
}

/** What running the hooks of one event needs. */
interface HookRun {
  layers: readonly HookLayer[];
  event: HookEvent;
  /** The fields every event's input has: `session_id`, `transcript_path`, `cwd`. */
  common: Record<string, unknown>;
  /** What the event is about, in a dialect's names. */
  subject: (dialect: HookDialect) => HookSubject;
  /** A Claude Code hook's `updatedInput`, in niffler's names. */
  fromClaude?: (input: Record<string, unknown>) => Record<string, unknown>;
  root: string;
  run: CommandRunner;
  signal: AbortSignal;
  /** Variables for the hooks besides the project directory (`CLAUDE_ENV_FILE`). */
  env?: Record<string, string>;
  /** Directories the hooks may write besides the workspace. */
  writable?: string[];
  /** Says a handler's `statusMessage` as it starts. */
  status?: (text: string) => void;
}

/** One handler selected to run, with what it is shown. */
interface Job {
  hook: HookHandler;
  dialect: HookDialect;
  subject: HookSubject;
}

/**
 * The handlers of `options.event` that run: each layer's matcher groups that select the event's
 * names in that layer's dialect, their `command` handlers whose `if` rule selects the call; one
 * handler written the same in several files runs once (as in Claude Code).
 */
const selectJobs = (options: HookRun): Job[] => {
  const subjects = new Map<HookDialect, HookSubject>();
  const seen = new Set<string>();
  return options.layers.flatMap((layer) => {
    const dialect = layer.dialect ?? 'niffler';
    const groups = layer.hooks[options.event] ?? [];
    if (groups.length === 0) return [];
    let subject = subjects.get(dialect);
    if (!subject) subjects.set(dialect, (subject = options.subject(dialect)));
    const chosen = subject;
    return groups
      .filter((group) => matcherSelects(group.matcher, chosen.target))
      .flatMap((group) => group.hooks)
      .filter((hook) => hook.type === 'command' && ruleSelects(hook.if, chosen.call))
      .filter((hook) => {
        const key = `${dialect}\0${hook.command}\0${JSON.stringify(hook.args ?? null)}`;
        return !seen.has(key) && Boolean(seen.add(key));
      })
      .map((hook) => ({ hook, dialect, subject: chosen }));
  });
};

/** Seconds a handler may run: its `timeout`, else its dialect's default, never past an hour. */
const timeoutOf = (hook: HookHandler, dialect: HookDialect, event: HookEvent): number => {
  const fallback = dialect === 'niffler' ? 60 : event === 'UserPromptSubmit' ? 30 : 600;
  return Math.min(hook.timeout ?? fallback, MAX_TIMEOUT);
};

/** The command a job runs, with its stdin, limits and environment. */
const specOf = (job: Job, options: HookRun): CommandSpec => ({
  command: handlerLine(job.hook, options.root),
  input: JSON.stringify({
    ...options.common,
    hook_event_name: options.event,
    ...job.subject.fields,
  }),
  timeoutSeconds: timeoutOf(job.hook, job.dialect, options.event),
  maxOutputBytes: HOOK_OUTPUT,
  env: {
    NIFFLER_PROJECT_DIR: options.root,
    CLAUDE_PROJECT_DIR: options.root,
    ...options.env,
  },
  ...(options.writable?.length ? { writable: options.writable } : {}),
});

/**
 * Runs the hooks of `event` whose matchers (and `if` rules) select it, side by side, each in
 * bash's sandbox with its own timeout and capped output, each layer's shown in its own names, and
 * folds what they said into one verdict. An `async` handler is started and not waited for. Never
 * throws: a hook that fails is a warning, and decides nothing.
 */
export const runHooks = async (options: HookRun): Promise<HookVerdict> => {
  const verdict: HookVerdict = { context: [], warnings: [] };
  const jobs = selectJobs(options);
  if (jobs.length === 0) return verdict;
  const keep = (input: Record<string, unknown>) => input;
  const ran = await Promise.all(
    jobs.map(async (job) => {
      const spec = specOf(job, options);
      if (job.hook.statusMessage) options.status?.(job.hook.statusMessage);
      if (job.hook.async || job.hook.asyncRewake) {
        void options.run(spec, options.signal).catch(() => undefined);
        return undefined;
      }
      const outcome = await options.run(spec, options.signal);
      const mapInput = job.dialect === 'claude' ? (options.fromClaude ?? keep) : keep;
      return { spec, outcome, mapInput };
    }),
  );
  for (const done of ran) {
    if (!done) continue;
    const { spec, outcome, mapInput } = done;
    if ('ok' in outcome) {
      const why = outcome.ok ? 'no outcome' : outcome.error.message;
      verdict.warnings.push(
        `${options.event} hook \`${short(spec.command)}\` could not run: ${why}`,
      );
      continue;
    }
    const line = spec.command;
    judge({ event: options.event, line, timeout: spec.timeoutSeconds, outcome, mapInput }, verdict);
  }
  return verdict;
};

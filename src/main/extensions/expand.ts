import path from 'node:path';
import type { CommandOutcome, CommandSpec } from '../../workers/protocol/tools.ts';
import type { ToolResult } from '../../workers/protocol/tool-result.ts';
import { readBoundedFileSync } from '../../workers/shared/bounded-read.ts';
import { deniedIn, type PolicyScope } from '../trust/effective.ts';
import type { PolicyLayer } from '../trust/policy.ts';
import { nifflerToolName } from './claude-names.ts';
import { SHELL_PATTERN, type CustomCommand } from './commands.ts';

/** Runs a command in bash's sandbox (the tools pool's `runCommand`). */
export type CommandRunner = (
  spec: CommandSpec,
  signal: AbortSignal,
) => Promise<CommandOutcome | ToolResult>;

/** Bytes of one `@path` file put into a command's prompt, at most. */
const MAX_FILE_BYTES = 256 * 1024;
/** Bytes of a `` !`cmd` ``'s output kept, and seconds it may run. */
const SHELL_OUTPUT = 64 * 1024;
const SHELL_SECONDS = 30;

/** What sending a custom command makes of it. */
interface ExpandedCommand {
  text: string;
  command: CustomCommand;
  /** `allowed-tools` as an allow layer for this turn (a deny elsewhere still wins). */
  policy: PolicyLayer[];
  /** What could not be expanded, said to the user. */
  notes: string[];
}

/** The custom command `text` invokes (`/git:commit fix typo`), and its argument text. */
export const findCommand = (
  commands: readonly CustomCommand[],
  text: string,
): { command: CustomCommand; args: string } | undefined => {
  const match = /^\/([^\s/][^\s]*)(?:\s+([\s\S]*))?$/.exec(text.trim());
  const name = match?.[1]?.toLowerCase();
  const command = name ? commands.find((c) => c.name.toLowerCase() === name) : undefined;
  return command ? { command, args: (match?.[2] ?? '').trim() } : undefined;
};

/** Words of an argument text; "double" or 'single' quotes keep spaces. */
const splitArguments = (text: string): string[] =>
  [...text.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3] ?? '');

/** `$ARGUMENTS` and `$1`…`$9` filled in; the arguments appended when the body names none. */
const fillArguments = (body: string, args: string): string => {
  const words = splitArguments(args);
  const uses = /\$ARGUMENTS|\$[1-9]/.test(body);
  const filled = body
    .replace(/\$ARGUMENTS/g, () => args)
    .replace(/\$([1-9])/g, (_m, n: string) => words[Number(n) - 1] ?? '');
  return !uses && args ? `${filled}\n\n${args}` : filled;
};

/** Each `` !`cmd` `` replaced by what it printed (run in bash's sandbox, unless bash is denied). */
const runShell = async (text: string, options: ExpandOptions, notes: string[]): Promise<string> => {
  const found = [...text.matchAll(SHELL_PATTERN)];
  if (found.length === 0) return text;
  const denied = deniedIn(options.scope, 'bash');
  const outputs: string[] = [];
  for (const [, cmd] of found) {
    if (denied) {
      notes.push(`!\`${cmd}\` not run: ${denied}`);
      outputs.push(`[not run: bash is denied]`);
      continue;
    }
    const spec = { command: cmd!, timeoutSeconds: SHELL_SECONDS, maxOutputBytes: SHELL_OUTPUT };
    const outcome = await options.run(spec, options.signal);
    if ('ok' in outcome) {
      notes.push(`!\`${cmd}\` could not run: ${outcome.ok ? 'no outcome' : outcome.error.message}`);
      outputs.push('[could not run]');
      continue;
    }
    if (outcome.exitCode !== 0)
      notes.push(
        `!\`${cmd}\` ${outcome.ended ?? (outcome.signal ? `died of ${outcome.signal}` : `exited ${outcome.exitCode}`)}`,
      );
    outputs.push(`${outcome.stdout}${outcome.stderr}`.trimEnd());
  }
  let index = 0;
  return text.replace(SHELL_PATTERN, () => outputs[index++] ?? '');
};

/** Each `@path` to a file of the workspace replaced by its contents (confined, bounded). */
const insertFiles = (text: string, options: ExpandOptions, notes: string[]): string =>
  text.replace(/(^|\s)@([\w./-]*[\w/-])/g, (whole, space: string, rel: string) => {
    const file = path.resolve(options.root, rel);
    try {
      const content = readBoundedFileSync(file, {
        maxBytes: MAX_FILE_BYTES,
        allowedRoots: [options.root],
        excluded: options.excluded,
        shown: rel,
      });
      return `${space}\n<file path="${rel}">\n${content.replace(/\n$/, '')}\n</file>\n`;
    } catch (error) {
      notes.push(`@${rel} left as it is: ${(error as Error).message}`);
      return whole;
    }
  });

interface ExpandOptions {
  root: string;
  /** Directories no `@path` may read (`$NIFFLER_HOME`). */
  excluded: string[];
  /** What the turn's calls may do: a `deny` of bash there keeps `` !`cmd` `` from running. */
  scope: PolicyScope;
  run: CommandRunner;
  signal: AbortSignal;
}

/**
 * Expands a custom command: arguments first, then `` !`cmd` `` (so a file's text is never run),
 * then `@path`. Never throws for a command or file that fails: the notes say what happened.
 */
export const expandCommand = async (
  command: CustomCommand,
  args: string,
  options: ExpandOptions,
): Promise<ExpandedCommand> => {
  const notes: string[] = [];
  const withArgs = fillArguments(command.body, args);
  const withShell = await runShell(withArgs, options, notes);
  const text = insertFiles(withShell, options, notes);
  const allowed = (command.allowedTools ?? []).flatMap((t) => nifflerToolName(t) ?? []);
  const rules = Object.fromEntries(allowed.map((t) => [t, 'allow' as const]));
  const policy = allowed.length
    ? [{ source: `command /${command.name} (${command.file})`, rules }]
    : [];
  return { text, command, policy, notes };
};

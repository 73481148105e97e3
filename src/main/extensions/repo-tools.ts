import { z } from 'zod';
import { fail, type ToolResult } from '../../workers/protocol/tool-result.ts';
import type { CommandOutcome } from '../../workers/protocol/tools.ts';
import { isBuiltinTool } from '../../workers/protocol/tool-names.ts';
import type { ToolEntry } from '../calls/types.ts';
import type { CommandRunner } from './expand.ts';
import type { ExtensionFile } from './files.ts';
import { checkSchema, parseYamlMapping, type Parsed } from './parse.ts';

/** A tool the repository declares in `.niffler/tools/NAME.yaml`; its command does the work. */
export interface RepoTool {
  name: string;
  description: string;
  /** JSON Schema of its arguments (an object). */
  parameters: Record<string, unknown>;
  /** Run by bash in the sandbox, the arguments as JSON on stdin; stdout is the result. */
  command: string;
  annotations: z.infer<typeof AnnotationsSchema>;
  /** Seconds before it is ended. */
  timeout: number;
  file: string;
}

const AnnotationsSchema = z.strictObject({
  title: z.string().optional(),
  readOnlyHint: z.boolean().optional(),
  destructiveHint: z.boolean().optional(),
  idempotentHint: z.boolean().optional(),
  openWorldHint: z.boolean().optional(),
});

const RepoToolSchema = z.strictObject({
  description: z.string().min(1),
  parameters: z
    .looseObject({ type: z.literal('object', { error: 'expected type: object' }) })
    .optional(),
  command: z.string().min(1),
  annotations: AnnotationsSchema.optional(),
  timeout: z.number().positive().max(3600).optional(),
});

/** Names niffler's engine answers itself. */
const RESERVED = new Set(['task', 'tool_search']);

/** A repository tool file read; the whole file is its trust part. */
export const parseRepoTool = (
  file: ExtensionFile,
): Parsed<{ item: RepoTool; trustValue: unknown }> => {
  const name = file.name;
  if (!/^[a-zA-Z0-9_-]{1,64}$/.test(name) || name.includes('__'))
    return {
      ok: false,
      problem: `${file.shown}:1: "${name}" is not a usable tool name (letters, digits, "_" and "-", no "__", at most 64)`,
    };
  if (isBuiltinTool(name) || RESERVED.has(name))
    return { ok: false, problem: `${file.shown}:1: "${name}" is the name of niffler's own tool` };
  const yaml = parseYamlMapping(file.text, file.shown);
  if (!yaml.ok) return yaml;
  const checked = checkSchema(RepoToolSchema, yaml.value, file.shown);
  if (!checked.ok) return checked;
  const meta = checked.value;
  return {
    ok: true,
    value: {
      item: {
        name,
        description: meta.description,
        parameters: meta.parameters ?? { type: 'object', properties: {} },
        command: meta.command,
        annotations: meta.annotations ?? {},
        timeout: meta.timeout ?? 60,
        file: file.file,
      },
      trustValue: yaml.value.data,
    },
  };
};

/** Bytes of a repository tool's stdout (and stderr) kept. */
const TOOL_OUTPUT = 1024 * 1024;

/** The required arguments `args` lacks, by the tool's schema. */
const missingArgs = (tool: RepoTool, args: Record<string, unknown>): string[] => {
  const required = tool.parameters['required'];
  return Array.isArray(required)
    ? required.filter((k): k is string => typeof k === 'string' && !(k in args))
    : [];
};

/** A result from what the tool's command did: stdout, as structured content when it is JSON. */
const toolResult = (tool: RepoTool, outcome: CommandOutcome): ToolResult => {
  const data = { exitCode: outcome.exitCode, sandboxed: outcome.sandboxed };
  const cut = outcome.cut ? '\n[output cut at 1 MiB]' : '';
  if (outcome.ended === 'timeout')
    return fail('timeout', `${tool.name} ran longer than ${tool.timeout}s and was ended`);
  if (outcome.ended || outcome.signal || outcome.exitCode !== 0) {
    const how =
      outcome.ended === 'flood'
        ? 'printed too much and was ended'
        : outcome.signal
          ? `died of ${outcome.signal}`
          : `exited ${outcome.exitCode}`;
    const text = `${outcome.stdout}${outcome.stderr}`.trim();
    return fail('tool-error', `${tool.name} ${how}`, text ? `${text}${cut}` : undefined);
  }
  const output = `${outcome.stdout}${cut}`;
  let structured: unknown;
  try {
    structured = outcome.cut ? undefined : (JSON.parse(outcome.stdout) as unknown);
  } catch {
    structured = undefined; // Plain text: the output is all there is.
  }
  return {
    ok: true,
    output: output || '(no output)',
    ...(structured !== undefined && typeof structured === 'object' ? { structured } : {}),
    data,
  };
};

/**
 * Runs repository tool `tool` on `args`: its command in bash's sandbox with the arguments as JSON
 * on stdin (the loop's tool table and the gateway both call it).
 */
export const runRepoTool = async (
  tool: RepoTool,
  run: CommandRunner,
  root: string,
  args: Record<string, unknown>,
  signal: AbortSignal,
): Promise<ToolResult> => {
  const missing = missingArgs(tool, args);
  if (missing.length)
    return fail('invalid-args', `${tool.name} needs ${missing.join(', ')}; see its parameters`);
  const outcome = await run(
    {
      command: tool.command,
      input: JSON.stringify(args),
      timeoutSeconds: tool.timeout,
      maxOutputBytes: TOOL_OUTPUT,
      env: { NIFFLER_PROJECT_DIR: root, NIFFLER_TOOL: tool.name },
    },
    signal,
  );
  return 'ok' in outcome ? outcome : toolResult(tool, outcome);
};

/**
 * A repository tool as the loop's tool table holds it: approved as an MCP tool is (asks unless
 * annotated read-only, or a rule says otherwise); its command runs in bash's sandbox with the
 * arguments as JSON on stdin — as `current()` has it when the call runs: a tool the repository no
 * longer contributes (untrusted since the table was built: a script it runs changed) is refused.
 */
export const repoToolEntry = (
  tool: RepoTool,
  run: CommandRunner,
  root: string,
  current: () => RepoTool | undefined = () => tool,
): ToolEntry => ({
  spec: { name: tool.name, description: tool.description, inputSchema: tool.parameters },
  kind: 'engine',
  asks: true,
  server: 'repo',
  readOnly: tool.annotations.readOnlyHint === true,
  destructive: tool.annotations.destructiveHint === true,
  run: (args, call) => {
    const now = current();
    if (now?.command !== tool.command) return Promise.resolve(fail('denied', notTrustedNow(tool)));
    return runRepoTool(now, run, root, args, call?.signal ?? new AbortController().signal);
  },
});

/** Why a repository tool listed earlier is not run now. */
export const notTrustedNow = (tool: RepoTool): string =>
  `${tool.name} is not run: the repository's contribution changed since this tool was listed (a script it runs, or the tool itself) and is not trusted as it stands; review with niffler trust --diff, then niffler trust`;

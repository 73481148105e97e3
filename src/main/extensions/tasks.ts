import { Cron } from 'croner';
import { z } from 'zod';
import type { ExtensionSource } from './agents.ts';
import type { ExtensionFile } from './files.ts';
import { checkSchema, parseYamlMapping, type Parsed } from './parse.ts';
import { NAME } from './agents.ts';

const InputSchema = z.strictObject({
  description: z.string().optional(),
  default: z.union([z.string(), z.number(), z.boolean()]).optional(),
  required: z.boolean().optional(),
});

const TaskSchema = z
  .strictObject({
    description: z.string().optional(),
    /** The prompt; `{{name}}` takes an input. */
    prompt: z.string().min(1).optional(),
    /** Or a custom command line: `/git:commit {{message}}`. */
    command: z.string().regex(/^\//, 'expected a command line starting with /').optional(),
    agent: z.string().min(1).optional(),
    model: z.string().min(1).optional(),
    inputs: z.record(z.string().regex(/^\w+$/, 'expected a word'), InputSchema).optional(),
    /** Cron syntax (5 fields, or 6 with seconds first); the daemon runs it then. */
    schedule: z.string().min(1).optional(),
    maxSteps: z.number().int().positive().optional(),
  })
  .refine((task) => (task.prompt === undefined) !== (task.command === undefined), {
    message: 'expected either prompt or command, not both and not neither',
  });

/** A named prompt (or command) with its agent, model and inputs; run by hand or on a schedule. */
export interface TaskDefinition {
  name: string;
  description: string;
  prompt?: string;
  command?: string;
  agent?: string;
  model?: string;
  inputs: Record<string, z.infer<typeof InputSchema>>;
  schedule?: string;
  maxSteps?: number;
  source: ExtensionSource;
  file: string;
}

/** Why `schedule` is not a cron expression, or undefined when it is one. */
const scheduleProblem = (schedule: string): string | undefined => {
  try {
    new Cron(schedule, { paused: true });
    return undefined;
  } catch (error) {
    return (error as Error).message.replace(/^CronPattern: /, '');
  }
};

/** A task file read; an invalid schedule refuses the file with the reason. */
export const parseTask = (
  file: ExtensionFile,
  dir: { source: ExtensionSource },
): Parsed<{ item: TaskDefinition; trustValue: unknown }> => {
  if (!NAME.test(file.name))
    return { ok: false, problem: `${file.shown}:1: "${file.name}" is not a usable task name` };
  const yaml = parseYamlMapping(file.text, file.shown);
  if (!yaml.ok) return yaml;
  const checked = checkSchema(TaskSchema, yaml.value, file.shown);
  if (!checked.ok) return checked;
  const meta = checked.value;
  const bad = meta.schedule ? scheduleProblem(meta.schedule) : undefined;
  if (bad)
    return {
      ok: false,
      problem: `${file.shown}:${yaml.value.lineOf(['schedule']) ?? 1} schedule: "${meta.schedule}" is not a cron schedule: ${bad}`,
    };
  const item: TaskDefinition = {
    name: file.name,
    description: meta.description ?? '',
    ...(meta.prompt ? { prompt: meta.prompt } : {}),
    ...(meta.command ? { command: meta.command } : {}),
    ...(meta.agent ? { agent: meta.agent } : {}),
    ...(meta.model ? { model: meta.model } : {}),
    inputs: meta.inputs ?? {},
    ...(meta.schedule ? { schedule: meta.schedule } : {}),
    ...(meta.maxSteps ? { maxSteps: meta.maxSteps } : {}),
    source: dir.source,
    file: file.file,
  };
  return { ok: true, value: { item, trustValue: yaml.value.data } };
};

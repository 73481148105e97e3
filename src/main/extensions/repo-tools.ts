import { z } from 'zod';
import { isBuiltinTool } from '../../workers/protocol/tools.ts';
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

export const RepoToolSchema = z.strictObject({
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

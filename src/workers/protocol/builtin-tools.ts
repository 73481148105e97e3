import { z } from 'zod';
import { TOOL_ARGS } from './tool-args.ts';
import type { BuiltinToolName } from './tool-names.ts';

/**
 * What a built-in is, declared once on its definition below and read by every part that asks:
 * the approval path (the policy and the dialog), the capability filter, the gateway's
 * annotations and `niffler tools policy`.
 */
interface BuiltinTraits {
  /** True when the tool never changes anything: allowed without asking, run in parallel. */
  readOnly: boolean;
  /** It may change or delete what the workspace holds (MCP's destructiveHint). */
  destructive: boolean;
  /** It reaches outside the workspace: the network, any command (MCP's openWorldHint). */
  openWorld: boolean;
  /** The policy when config says nothing: `ask` when it needs the user's approval. */
  defaultPolicy: 'allow' | 'ask';
}

/** A tool as offered to the model. `parameters` is a JSON Schema object. */
export interface ToolDefinition extends BuiltinTraits {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** Reads the workspace, changes nothing. */
const READS: BuiltinTraits = {
  readOnly: true,
  destructive: false,
  openWorld: false,
  defaultPolicy: 'allow',
};
/** Writes the workspace: asks first. */
const WRITES: BuiltinTraits = {
  readOnly: false,
  destructive: true,
  openWorld: false,
  defaultPolicy: 'ask',
};

const DESCRIPTIONS: Record<BuiltinToolName, BuiltinTraits & { description: string }> = {
  read_file: {
    ...READS,
    description:
      'Read a text file with line numbers, a page at a time (offset/limit). Images are returned ' +
      'as images. Also reads the files where cut tool output was saved.',
  },
  list_dir: {
    ...READS,
    description: 'List a directory as a tree, honouring .gitignore. Directories end with "/".',
  },
  path_info: {
    ...READS,
    description: 'Describe a path: type, size, modification time, mode and symlink target.',
  },
  write_file: {
    ...WRITES,
    description: 'Create or overwrite a file with the given content (atomic; creates parents).',
  },
  edit_file: {
    ...WRITES,
    description:
      'Replace an exact piece of text in a file and return the unified diff. oldText must occur ' +
      'exactly once unless replaceAll is true; read the file first to copy it exactly.',
  },
  glob: {
    ...READS,
    description:
      'Find files by glob pattern in the whole workspace, fast; skips what .gitignore, .ignore ' +
      'and hidden names leave out (as ripgrep). Paths sorted by modification time, newest first. ' +
      'A result that says [incomplete: ...] on its first line tells how to continue (offset or path).',
  },
  grep: {
    ...READS,
    description:
      'Search file contents with a regular expression in the whole workspace, fast; skips what ' +
      '.gitignore, .ignore and hidden names leave out (as ripgrep), and binary files. ' +
      'output_mode content gives "path:line: text" (-A/-B/-C for context), files_with_matches the ' +
      'paths, count the matches per file; filter with glob or type; page with head_limit and ' +
      'offset. A result that says [incomplete: ...] on its first line tells how to continue.',
  },
  bash: {
    ...WRITES,
    openWorld: true,
    description:
      'Run a shell command in the workspace root and return its combined output, exit code and ' +
      'signal. No stdin; the whole process group is ended on timeout.',
  },
  // A GET: it reaches out (open-world) and asks, but changes nothing here (not destructive).
  fetch: {
    readOnly: false,
    destructive: false,
    openWorld: true,
    defaultPolicy: 'ask',
    description: 'GET an http(s) URL and return its content; HTML is converted to markdown.',
  },
  // Changes only the session's own list: not read-only, not destructive, allowed.
  todo: {
    readOnly: false,
    destructive: false,
    openWorld: false,
    defaultPolicy: 'allow',
    description:
      "Keep the session's todo list to plan multi-step work: add items, update an item's " +
      'status or text, or list them. Every action returns the whole list.',
  },
};

const toParameters = (schema: z.ZodType): Record<string, unknown> => {
  const { $schema: _schema, ...rest } = z.toJSONSchema(schema, { io: 'input' });
  return rest;
};

let builtinDefinitions: readonly ToolDefinition[] | undefined;

/**
 * The built-in tools as data for the model; no implementation is loaded. Built on first call (the
 * JSON Schemas cost time, and the tools worker, which imports this module, never needs them).
 */
export const builtinTools = (): readonly ToolDefinition[] =>
  (builtinDefinitions ??= (Object.keys(TOOL_ARGS) as BuiltinToolName[]).map((name) => {
    const { description, ...traits } = DESCRIPTIONS[name];
    return { name, description, parameters: toParameters(TOOL_ARGS[name]), ...traits };
  }));

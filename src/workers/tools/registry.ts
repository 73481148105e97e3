import type { BuiltinToolName, ToolArgs, ToolContext } from '../protocol/tools.ts';
import type { ToolResult } from '../protocol/tool-result.ts';
import { editFile } from './edit-file.ts';
import type { ToolIo } from './io.ts';
import { glob } from './glob.ts';
import { grep } from './grep.ts';
import { listDir } from './list-dir.ts';
import { pathInfo } from './path-info.ts';
import { readFile } from './read-file.ts';
import { todo } from './todo.ts';
import { writeFile } from './write-file.ts';

/** The implementation of one built-in tool; arguments are already validated. */
export type ToolRun<N extends BuiltinToolName> = (
  args: ToolArgs<N>,
  context: ToolContext,
  io: ToolIo,
) => Promise<ToolResult>;

/**
 * Every built-in tool's implementation, by name. `bash` (execa) and `fetch` (turndown and its DOM)
 * load on first use, so a pool thread starts without them.
 */
export const TOOL_RUNS: { [N in BuiltinToolName]: ToolRun<N> } = {
  read_file: readFile,
  list_dir: listDir,
  path_info: pathInfo,
  write_file: writeFile,
  edit_file: editFile,
  glob,
  grep,
  bash: async (args, context, io) => (await import('./bash.ts')).bash(args, context, io),
  fetch: async (args, context, io) => (await import('./fetch.ts')).fetchUrl(args, context, io),
  todo,
};

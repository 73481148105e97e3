import type { ToolArgs, ToolContext } from '../protocol/tools.ts';
import type { ToolResult } from '../protocol/tool-result.ts';
import { searchIo, type SearchToolIo } from './search/executor.ts';
import { runSearch } from './search/run.ts';
import { globSpec } from './search/spec.ts';

/**
 * `glob`: the files matching a glob in the whole workspace, as ripgrep's rules leave them, newest
 * first. Its chunks run on other threads of the pool when its owner offers them, else in its
 * own thread.
 */
export const glob = (
  args: ToolArgs<'glob'>,
  context: ToolContext,
  io: SearchToolIo,
): Promise<ToolResult> => runSearch(globSpec(args), context, ...searchIo(io));

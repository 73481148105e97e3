import type { ToolArgs, ToolContext } from '../protocol/tools.ts';
import type { ToolResult } from '../protocol/tool-result.ts';
import { fail } from './result.ts';
import { searchIo, type SearchToolIo } from './search/executor.ts';
import { runSearch } from './search/run.ts';
import { grepSpec } from './search/spec.ts';

/**
 * `grep`: the lines (or files, or counts) matching a regular expression in the whole workspace, as
 * ripgrep would find them (its ignore rules; binary files skipped), in the listing's order. Its chunks run
 * on other threads of the pool when its owner offers them, else in its own thread.
 */
export const grep = (
  args: ToolArgs<'grep'>,
  context: ToolContext,
  io: SearchToolIo,
): Promise<ToolResult> => {
  const spec = grepSpec(args);
  if (typeof spec === 'string') return Promise.resolve(fail('invalid-args', spec));
  return runSearch(spec, context, ...searchIo(io));
};

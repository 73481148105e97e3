import { z } from 'zod';
import {
  isBuiltinTool,
  TOOL_ARGS,
  type BuiltinToolName,
  type ToolTask,
} from '../protocol/tools.ts';
import type { ToolResult } from '../protocol/tool-result.ts';
import { TOOL_RUNS, type ToolRun } from './registry.ts';
import { fail, messageOf } from './result.ts';

const run = async <N extends BuiltinToolName>(name: N, task: ToolTask): Promise<ToolResult> => {
  const parsed = TOOL_ARGS[name].safeParse(task.args ?? {});
  if (!parsed.success)
    return fail('invalid-args', `${name}: invalid arguments:\n${z.prettifyError(parsed.error)}`);
  const runTool = TOOL_RUNS[name] as ToolRun<N>;
  return runTool(parsed.data as z.infer<(typeof TOOL_ARGS)[N]>, task.context, task.port);
};

/**
 * The tools pool's task entry: validates the arguments, runs the tool, and always returns a
 * `ToolResult` — an unexpected exception becomes an `internal` result, never a rejected task.
 */
export default async function runToolTask(task: ToolTask): Promise<ToolResult> {
  try {
    if (!isBuiltinTool(task.tool))
      return fail('invalid-args', `${task.tool} is not a built-in tool`);
    return await run(task.tool, task);
  } catch (error) {
    return fail('internal', `${task.tool} failed unexpectedly: ${messageOf(error)}`);
  } finally {
    task.port?.close();
  }
}

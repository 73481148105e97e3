import { COMMAND_TASK, isBuiltinTool, type BuiltinToolName } from '../protocol/tool-names.ts';
import { SCAN_TASK, WALK_TASK, type ScanChunk, type WalkRequest } from '../protocol/search.ts';
import type { ToolResult } from '../protocol/tool-result.ts';
import type { CommandSpec, ToolArgs, ToolControlMessage, ToolTask } from '../protocol/tools.ts';
import type { ToolIo } from './io.ts';
import { TOOL_RUNS, type ToolRun } from './registry.ts';
import { done, fail, messageOf } from './result.ts';
import { scanChunk } from './search/scan.ts';
import { walkFiles } from './search/walk-files.ts';
import { whenAborted } from '../shared/abort.ts';

/** Runs built-in `name` on arguments its host validated (`parseToolArgs`). */
const run = <N extends BuiltinToolName>(name: N, task: ToolTask, io: ToolIo): Promise<ToolResult> =>
  (TOOL_RUNS[name] as ToolRun<N>)(task.args as ToolArgs<N>, task.context, io);

/**
 * The tools pool's task entry: runs the tool on the arguments its host validated (this thread
 * loads no schema library), and always returns a
 * `ToolResult` — an unexpected exception becomes an `internal` result, never a rejected task.
 */
export default async function runToolTask(
  task: ToolTask,
  signal: AbortSignal = new AbortController().signal,
): Promise<ToolResult> {
  const controller = new AbortController();
  const abort = () => controller.abort();
  const offAbort = whenAborted(signal, abort);
  task.port?.on('message', (message: ToolControlMessage) => {
    if (message.type === 'cancel') controller.abort();
  });
  try {
    const io = {
      signal: controller.signal,
      ...(task.port ? { port: task.port } : {}),
      ...(task.searchThreads ? { searchThreads: task.searchThreads } : {}),
    };
    if (task.tool === COMMAND_TASK)
      return await (
        await import('./command.ts')
      ).runCommand(task.args as CommandSpec, task.context, io);
    // A search's pieces (the host hands them out): their result travels as `structured`.
    if (task.tool === SCAN_TASK) return done('', { structured: scanChunk(task.args as ScanChunk) });
    if (task.tool === WALK_TASK)
      return done('', { structured: walkFiles(task.args as WalkRequest) });
    if (!isBuiltinTool(task.tool))
      return fail('invalid-args', `${task.tool} is not a built-in tool`);
    return await run(task.tool, task, io);
  } catch (error) {
    return fail('internal', `${task.tool} failed unexpectedly: ${messageOf(error)}`);
  } finally {
    offAbort();
    task.port?.close();
  }
}

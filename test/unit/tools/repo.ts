import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdtempSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  watch,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { onTestFinished } from 'vitest';
import {
  isBuiltinTool,
  parseToolArgs,
  type ToolContext,
  type ToolLimits,
} from '../../../src/workers/protocol/tools.ts';

export interface TempRepo {
  /** The workspace root: a fresh git repository. */
  root: string;
  /** A sibling directory outside the workspace, holding `secret.txt`. */
  outside: string;
  /** `$NIFFLER_HOME` for this test. */
  home: string;
  context: ToolContext;
  /** Writes files relative to the root, creating parents. */
  write: (files: Record<string, string>) => void;
  /** Removes everything; called after the test unless `autoRemove` is false. */
  remove: () => void;
}

/** A temporary git repository with an outside directory next to it; removed after the test. */
export const tempRepo = (limits: Partial<ToolLimits> = {}, autoRemove = true): TempRepo => {
  const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'niffler-tools-')));
  const remove = () => rmSync(base, { recursive: true, force: true });
  if (autoRemove) onTestFinished(remove);
  const root = path.join(base, 'repo');
  const outside = path.join(base, 'outside');
  const home = path.join(base, 'home');
  for (const dir of [root, outside, home]) mkdirSync(dir);
  execFileSync('git', ['init', '-q'], { cwd: root });
  writeFileSync(path.join(outside, 'secret.txt'), 'TOP SECRET\n');
  const write = (files: Record<string, string>) => {
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
      writeFileSync(path.join(root, file), text);
    }
  };
  const context: ToolContext = {
    root,
    allowedPaths: [],
    excluded: [home],
    outputsDir: path.join(home, 'outputs', 'repo'),
    todoFile: path.join(home, 'sessions', 'repo', 's1.todo.json'),
    limits: {
      maxChars: 30_000,
      maxFileBytes: 1024 * 1024,
      bashTimeout: 120,
      bashMaxTimeout: 600,
      searchSeconds: 30,
      ...limits,
    },
    // The process-group tests read pids the command prints: they run unsandboxed, where those
    // pids are this system's (sandbox.test.ts runs bash in bubblewrap).
    bash: { sandbox: 'off', network: false, limits: {}, passEnv: [], hide: [home] },
    fetch: { allowPrivate: [] },
  };
  return { root, outside, home, context, write, remove };
};

/**
 * Runs one tool as the host does, in-process: its arguments validated (`parseToolArgs`, as
 * `ToolsHost.run`), then the worker's task entry.
 */
export const runTool = async (context: ToolContext, tool: string, args: unknown) => {
  const { default: runToolTask } = await import('../../../src/workers/tools/worker.ts');
  if (!isBuiltinTool(tool)) return runToolTask({ tool, args, context });
  const parsed = parseToolArgs(tool, args);
  return parsed.ok ? runToolTask({ tool, args: parsed.args, context }) : parsed.result;
};

/** The text of a result: `output` when there is one, else the error message. */
export const textOf = (result: { ok: boolean; output?: string; error?: { message: string } }) =>
  result.output ?? result.error?.message ?? '';

/**
 * True when the process still runs: `kill(pid, 0)` succeeds and it is not a zombie (a killed
 * orphan waits for init to reap it, which this container's init does only every few seconds).
 */
export const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false; // gone between the two checks
  }
};

/**
 * Resolves once `file` exists and holds `lines` non-empty lines (matching `pattern`, when given);
 * woken by fs events on its directory.
 */
export const waitForLines = (file: string, lines: number, pattern?: RegExp): Promise<string[]> =>
  new Promise((resolve) => {
    const check = () => {
      const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
      const found = text.split('\n').filter((line) => line && (!pattern || pattern.test(line)));
      if (found.length < lines) return false;
      watcher.close();
      resolve(found);
      return true;
    };
    const watcher = watch(path.dirname(file), () => void check());
    check();
  });

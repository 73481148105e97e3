import path from 'node:path';
import type { ToolResult } from '../../workers/protocol/tool-result.ts';
import type { LspHost } from '../threads/lsp.ts';
import { withDiagnostics } from './format.ts';

/** How long an edit waits for its files' old text to reach their servers (a stuck worker: not at all). */
const PREPARE_MS = 250;
/** How long after the deadline the host still waits for the worker's answer. */
const GRACE_MS = 300;
/** Files a command changed that are diagnosed, at most (the rest are only told to the servers). */
const MAX_COMMAND_FILES = 10;

/** A call as the loop sees it (name and arguments). */
interface ObservedCall {
  name: string;
  args: Record<string, unknown>;
}

/**
 * What a turn's calls go through for language servers: after `write_file` and `edit_file`, and
 * after `bash` for the files its undo snapshot shows changed, the diagnostics the change brought
 * are added to the result — within `lsp.diagnosticsWait` of the change, or not at all.
 */
export interface EditDiagnostics {
  around(call: ObservedCall, run: () => Promise<ToolResult>): Promise<ToolResult>;
}

/**
 * What the loop needs of the undo snapshots (the engine's `SnapshotStore`): the workspace's tree
 * now, and the files changed between two trees.
 */
export interface ChangedFiles {
  tree(): Promise<{ ok: true; tree: string } | { ok: false; reason: string }>;
  changes(
    from: string,
    to: string,
  ): Promise<{ path: string; change: 'added' | 'modified' | 'deleted' }[]>;
}

/** What the loop needs of the service, each time (the config may have changed). */
interface LoopDeps {
  root: string;
  /** The host while a server runs (starting, ready or degraded); none otherwise. */
  host(): LspHost | undefined;
  /** Starts the server of `file` in the background (the first file of its language here). */
  wake(file: string): void;
  /** Whether a file's name is one a configured server serves. */
  serves(file: string): boolean;
  settings(): { wait: number; warnings: boolean };
  snapshots(): ChangedFiles;
  /** The tree a command's changes are counted from, by the turn's first snapshot. */
  lastTree: Map<string, string>;
}

/** The loop of one step of a turn; `snapshot` is the turn's first snapshot, once taken. */
export const editDiagnostics = (
  deps: LoopDeps,
  snapshot: () => string | undefined,
): EditDiagnostics => ({
  around: async (call, run) => {
    const host = deps.host();
    if (!host) {
      const result = await run();
      const file = editedFile(deps, call, result);
      if (file) deps.wake(file);
      return result;
    }
    if (call.name === 'bash') {
      const result = await run();
      return afterCommand(deps, host, snapshot(), result, Date.now());
    }
    if (call.name !== 'write_file' && call.name !== 'edit_file') return run();
    const named =
      typeof call.args['path'] === 'string'
        ? path.resolve(deps.root, call.args['path'])
        : undefined;
    if (named && deps.serves(named)) await host.prepare([named], PREPARE_MS).catch(() => undefined);
    const result = await run();
    const at = Date.now();
    const changed = editedFile(deps, call, result);
    return changed ? diagnosed(deps, host, result, [changed], [], at) : result;
  },
});

/** The file an edit changed, when a server serves its language. */
const editedFile = (deps: LoopDeps, call: ObservedCall, result: ToolResult): string | undefined => {
  if (call.name !== 'write_file' && call.name !== 'edit_file') return undefined;
  const shownPath = result.ok ? result.data?.['path'] : undefined;
  const file = typeof shownPath === 'string' ? path.resolve(deps.root, shownPath) : undefined;
  return file && deps.serves(file) ? file : undefined;
};

/** The files a command changed (from the undo snapshots) and what that brought. */
const afterCommand = async (
  deps: LoopDeps,
  host: LspHost,
  base: string | undefined,
  result: ToolResult,
  at: number,
): Promise<ToolResult> => {
  if (!base) return result;
  const store = deps.snapshots();
  const now = await store.tree();
  if (!now.ok) return result;
  const before = deps.lastTree.get(base) ?? base;
  deps.lastTree.set(base, now.tree);
  // One entry per turn at a time is all that is ever read; keep the map small.
  if (deps.lastTree.size > 16) deps.lastTree.delete(deps.lastTree.keys().next().value!);
  if (before === now.tree) return result;
  const changes = (await store.changes(before, now.tree).catch(() => [])).filter((c) =>
    deps.serves(path.join(deps.root, c.path)),
  );
  const changed = changes
    .filter((c) => c.change !== 'deleted')
    .map((c) => path.join(deps.root, c.path));
  const gone = changes
    .filter((c) => c.change === 'deleted')
    .map((c) => path.join(deps.root, c.path));
  if (!changed.length && !gone.length) return result;
  return diagnosed(deps, host, result, changed.slice(0, MAX_COMMAND_FILES), gone, at);
};

/** The result with its files' new diagnostics, asked for until the deadline (from the change, `at`). */
const diagnosed = async (
  deps: LoopDeps,
  host: LspHost,
  result: ToolResult,
  files: string[],
  gone: string[],
  at: number,
): Promise<ToolResult> => {
  const { wait, warnings } = deps.settings();
  if (wait <= 0) return result;
  try {
    const outcomes = await host.diagnose(
      { files, gone, deadline: at + wait * 1000, warnings },
      GRACE_MS,
    );
    return withDiagnostics(result, outcomes);
  } catch {
    // The worker did not answer by the deadline: the result goes as it is.
    return result;
  }
};

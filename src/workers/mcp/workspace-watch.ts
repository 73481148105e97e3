import { watch, type FSWatcher } from 'node:fs';

/** Changes within this window are one change. */
const SETTLE_MS = 100;

/**
 * Calls `onChange` (debounced) when a file under `root` changes, `.git/` aside: what makes cached
 * tool results stale. Recursive watching costs a watch per directory, so it runs only while some
 * server caches results (`mcpServers.X.cache`). Returns the function that stops it; a root that
 * cannot be watched is not (results then live out their time).
 */
export const watchWorkspace = (root: string, onChange: () => void): (() => void) => {
  let timer: NodeJS.Timeout | undefined;
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(root, { recursive: true, persistent: false }, (_event, file) => {
      if (file && (file === '.git' || file.startsWith(`.git/`))) return;
      clearTimeout(timer);
      timer = setTimeout(onChange, SETTLE_MS);
    });
    watcher.on('error', () => watcher?.close());
  } catch {
    // No watching (too many watches, a vanished root): results expire by their time alone.
  }
  return () => {
    clearTimeout(timer);
    watcher?.close();
  };
};

import { watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import { debounced } from '../debounce.ts';

/**
 * Watches config files (which may not exist yet) through their directories and calls `onChange`
 * once per burst of changes. Returns a function that stops watching.
 */
export const watchConfigFiles = (
  files: string[],
  onChange: () => void,
  debounceMs = 150,
): (() => void) => {
  const byDir = new Map<string, Set<string>>();
  for (const file of files) {
    const dir = path.dirname(file);
    if (!byDir.has(dir)) byDir.set(dir, new Set());
    byDir.get(dir)!.add(path.basename(file));
  }
  const { fire, cancel } = debounced(onChange, debounceMs);
  const watchers: FSWatcher[] = [];
  for (const [dir, names] of byDir) {
    try {
      const watcher = watch(dir, { persistent: false }, (_event, name) => {
        if (name === null || names.has(name.toString())) fire();
      });
      watcher.on('error', () => {
        // The directory went away; a later `niffler` start sets up watching anew.
      });
      watchers.push(watcher);
    } catch {
      // The directory does not exist yet (no repo .niffler/): watch its parent for it to appear.
      try {
        const parent = watch(path.dirname(dir), { persistent: false }, (_event, name) => {
          if (name !== null && name.toString() === path.basename(dir)) fire();
        });
        parent.on('error', () => {});
        watchers.push(parent);
      } catch {
        // Neither exists: nothing to watch.
      }
    }
  }
  return () => {
    cancel();
    for (const watcher of watchers) watcher.close();
  };
};

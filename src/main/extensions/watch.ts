import { existsSync, watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import { debounced } from '../debounce.ts';

/**
 * Watches extension directories (with their subdirectories) and calls `onChange` once per burst
 * of changes; a directory that does not exist yet is watched for through its nearest existing
 * parent. Returns a function that stops watching.
 */
export const watchExtensionDirs = (
  dirs: readonly string[],
  onChange: () => void,
  debounceMs = 150,
): (() => void) => {
  const { fire, cancel } = debounced(onChange, debounceMs);
  const watchers: FSWatcher[] = [];
  const add = (dir: string, recursive: boolean, only?: string) => {
    try {
      const watcher = watch(dir, { persistent: false, recursive }, (_event, name) => {
        if (!only || name === null || name.toString().split(path.sep)[0] === only) fire();
      });
      watcher.on('error', () => {}); // The directory went away; the next reload watches anew.
      watchers.push(watcher);
    } catch {
      // Cannot be watched (gone meanwhile, no permission): changes show on the next reload.
    }
  };
  const parents = new Set<string>();
  for (const dir of dirs) {
    if (existsSync(dir)) {
      add(dir, true);
      continue;
    }
    let child = dir;
    let parent = path.dirname(dir);
    while (!existsSync(parent) && path.dirname(parent) !== parent) {
      child = parent;
      parent = path.dirname(parent);
    }
    const key = `${parent}\0${path.basename(child)}`;
    if (!parents.has(key)) add(parent, false, path.basename(child));
    parents.add(key);
  }
  return () => {
    cancel();
    for (const watcher of watchers) watcher.close();
  };
};

import { closeSync, fstatSync, mkdirSync, openSync, readFileSync, type Stats } from 'node:fs';
import Module, { createRequire } from 'node:module';
import path from 'node:path';
import vm from 'node:vm';
import { shortHash } from './paths.ts';
import { writeAtomicSync } from '../workers/shared/atomic.ts';

/**
 * Loads a CommonJS bundle the way `require` does, through a V8 code cache kept in `cacheDir`.
 *
 * Node's own compile cache (`module.enableCompileCache`) stores a file's code as compiled before
 * it runs, so every function it calls is compiled again on each start. This cache is made at
 * exit, after the run: it holds the functions the run used too, which saves a few milliseconds of
 * a command that takes forty.
 *
 * The cache is one file per bundle path, headed by a key of the bundle's identity (the digest the
 * build gave it, inode, size, modification time) and the Node version: a rebuilt, moved or edited
 * bundle, or another Node, misses and writes a new one. V8 checks the data again and rejects what
 * does not fit its own build. It lives under `NIFFLER_HOME`, which only its user can write: code
 * read from it runs as them.
 * The cache is only an optimization: any failure to read or write it falls back to a plain load.
 * The bundle must not use `import()` (the build turns it into `require`): a vm.Script has no
 * module loader unless given Node's experimental one.
 */
export const requireWithCodeCache = <T>(
  file: string,
  cacheDir: string,
  build = '',
  options: CodeCacheOptions<T> = {},
): T => {
  const { exports, saveCache } = loadWithCodeCache<T>(file, cacheDir, build);
  // Only once the bundle has loaded: a broken one has nothing to cache, nor a `typicalRun` to ask.
  process.once('exit', () => {
    if (options.typicalRun?.(exports) ?? true) saveCache();
  });
  return exports;
};

/** A bundle loaded through a code cache, and the way to write the cache when it is time. */
export interface CodeCached<T> {
  exports: T;
  /**
   * Writes the cache from what has been compiled so far, when the cache was missing or rejected
   * (once; nothing otherwise). Called when the run has done what later runs do too: at exit for a
   * command, once warm for the daemon.
   */
  saveCache: () => void;
}

/** `requireWithCodeCache`, with the writing of the cache left to the caller (`saveCache`). */
export const loadWithCodeCache = <T>(file: string, cacheDir: string, build = ''): CodeCached<T> => {
  // The key and the source from one open file: a bundle replaced meanwhile cannot pair them wrong.
  const fd = openSync(file, 'r');
  let source: string, stat: Stats;
  try {
    stat = fstatSync(fd);
    source = readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
  const key = `${process.version} ${build || '-'} ${stat.ino} ${stat.size} ${stat.mtimeMs}`;
  const cacheFile = path.join(cacheDir, `${path.basename(file)}-${shortHash(file)}.bin`);
  const cached = readCache(cacheFile, key);
  const script = new vm.Script(Module.wrap(source), {
    filename: file,
    ...(cached ? { cachedData: cached } : {}),
  });
  const module = { exports: {} as T };
  const wrapper = script.runInThisContext() as (...args: unknown[]) => void;
  wrapper.call(
    module.exports,
    module.exports,
    createRequire(file),
    module,
    file,
    path.dirname(file),
  );
  let due = !cached || script.cachedDataRejected === true;
  return {
    exports: module.exports,
    saveCache: () => {
      if (due) writeCache(cacheFile, key, script);
      due = false;
    },
  };
};

interface CodeCacheOptions<T> {
  /**
   * Asked at exit whether this run is one to make the cache from (default: yes). The cache holds
   * every function a run compiled, and it is read whole at each start: made from a rare run (the
   * one that started the daemon, say), it would hold code later runs never call and cost each of
   * them its loading (a cache five times the size, 2.5 ms more per start). Such a run writes
   * nothing, and a later typical one writes the cache.
   */
  typicalRun?: (exports: T) => boolean;
}

const readCache = (cacheFile: string, key: string): Buffer | undefined => {
  try {
    const data = readFileSync(cacheFile);
    const newline = data.indexOf(10);
    return newline > 0 && data.toString('utf8', 0, newline) === key
      ? data.subarray(newline + 1)
      : undefined;
  } catch {
    return undefined;
  }
};

const writeCache = (cacheFile: string, key: string, script: vm.Script): void => {
  try {
    mkdirSync(path.dirname(cacheFile), { recursive: true, mode: 0o700 });
    // Atomic: a start that reads the cache meanwhile sees the old file or the new, never half.
    writeAtomicSync(
      cacheFile,
      Buffer.concat([Buffer.from(`${key}\n`), script.createCachedData()]),
      0o600,
    );
  } catch {
    // A read-only or full home: the next start compiles as usual. Nothing half-written stays.
  }
};

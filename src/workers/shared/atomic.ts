import { chmodSync, closeSync, fsyncSync, openSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { writeAllSync } from './whole-write.ts';

// The one atomic file writer of niffler: everything it writes for itself or for a tool — config
// edits, trust and approvals, todo lists, caches, tokens, files the model writes — goes through a
// temporary file in the same directory, fsync, then a rename, so readers see the old file or the
// new one, never half of one; a hard link or symlink at the path is replaced, never written
// through. (No node:crypto for the temp name: the launcher's fast path uses this too.)

let counter = 0;

const tempOf = (file: string): string =>
  path.join(
    path.dirname(file),
    `.${path.basename(file).slice(0, 200)}.niffler-${process.pid}-${Date.now().toString(36)}-${++counter}.tmp`,
  );

/** Writes `content` to `file` atomically (see above), with `mode`. */
export const writeAtomic = async (
  file: string,
  content: string | Uint8Array,
  mode = 0o644,
): Promise<void> => {
  // Loaded on first use: the bin loads this module at every start (its code cache), and
  // node:fs/promises brings a dozen internal modules.
  const { chmod, open, rename, rm } = process.getBuiltinModule('node:fs/promises');
  const temp = tempOf(file);
  try {
    const handle = await open(temp, 'wx', mode);
    try {
      await handle.writeFile(content);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await chmod(temp, mode);
    await rename(temp, file);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
};

/** `writeAtomic` for the synchronous paths (config loading, the launcher, small state files). */
export const writeAtomicSync = (file: string, content: string | Uint8Array, mode = 0o644): void => {
  const temp = tempOf(file);
  try {
    const fd = openSync(temp, 'wx', mode);
    try {
      writeAllSync(fd, typeof content === 'string' ? Buffer.from(content) : content);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    chmodSync(temp, mode);
    renameSync(temp, file);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
};

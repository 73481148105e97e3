import { randomBytes } from 'node:crypto';
import { chmod, open, rename, rm } from 'node:fs/promises';
import path from 'node:path';

/**
 * Writes `content` to `file` through a temporary file in the same directory and a rename, so
 * readers see the old or the new file, never half of one. A hard link or symlink at `file` is
 * replaced, never written through.
 */
export const writeAtomic = async (file: string, content: string, mode = 0o644): Promise<void> => {
  const temp = path.join(
    path.dirname(file),
    `.${path.basename(file).slice(0, 200)}.niffler-${randomBytes(4).toString('hex')}.tmp`,
  );
  try {
    const handle = await open(temp, 'wx', mode);
    try {
      await handle.writeFile(content, 'utf8');
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

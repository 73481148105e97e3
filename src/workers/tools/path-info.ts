import { readlink } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import path from 'node:path';
import type { ToolArgs, ToolContext } from '../protocol/tools.ts';
import type { ToolResult } from '../protocol/tool-result.ts';
import { done, fail } from './result.ts';
import { displayPath, isRefused, lstatIfExists, resolveEntry, resolvePath } from './sandbox.ts';

const typeOf = (stats: Stats): string =>
  stats.isFile()
    ? 'file'
    : stats.isDirectory()
      ? 'directory'
      : stats.isSymbolicLink()
        ? 'symlink'
        : 'other (device, FIFO or socket)';

const describe = (stats: Stats) => ({
  type: typeOf(stats),
  size: stats.size,
  mtime: stats.mtime.toISOString(),
  mode: `0${(stats.mode & 0o7777).toString(8)}`,
});

/**
 * `path_info`: type, size, mtime, mode; for a symlink its target. The link itself is described
 * (its directory must be allowed); its target is described only when it is allowed too.
 */
export const pathInfo = async (
  args: ToolArgs<'path_info'>,
  context: ToolContext,
): Promise<ToolResult> => {
  const parent = await resolvePath(path.dirname(args.path || '.'), context, 'read');
  if (isRefused(parent)) return parent;
  const link = path.join(parent.real, path.basename(args.path || '.'));
  // undefined: lstat failed for another reason than a missing file; resolvePath reports that
  const linkStats = await lstatIfExists(link).catch(() => undefined);
  if (linkStats?.isSymbolicLink()) {
    const to = await readlink(link);
    const target = await resolvePath(args.path, context, 'read');
    const info = { path: displayPath(link, parent.root), ...describe(linkStats), target: to };
    if (isRefused(target))
      return done(
        `${JSON.stringify(info, null, 2)}\n(the target is outside the allowed directories)`,
        {
          structured: info,
        },
      );
    // `target.real` has no symlink left, so its lstat is what stat would give
    const targetInfo = target.stats ? describe(target.stats) : { type: 'missing' };
    const full = { ...info, resolved: target.display, targetInfo };
    return done(JSON.stringify(full, null, 2), { structured: full });
  }
  // Not a symlink: the path is the parent's real path and the name, and linkStats is its lstat.
  const target =
    resolveEntry(args.path, parent, linkStats) ?? (await resolvePath(args.path, context, 'read'));
  if (isRefused(target)) return target;
  if (!target.stats) return fail('not-found', `${target.display} does not exist`);
  const info = { path: target.display, ...describe(target.stats) };
  return done(JSON.stringify(info, null, 2), { structured: info });
};

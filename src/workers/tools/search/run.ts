import path from 'node:path';
import type { ToolContext } from '../../protocol/tools.ts';
import type { ToolResult } from '../../protocol/tool-result.ts';
import { isInside } from '../../shared/confine.ts';
import { fail } from '../result.ts';
import { isRefused, refusal, resolvePath, type Resolved } from '../sandbox.ts';
import { finish } from './finish.ts';
import type { SearchExecutor, SearchIo } from './io.ts';
import { Search } from './search.ts';
import type { SearchSpec } from './spec.ts';

/** The allowed root `real` is in: where ignore files start to count. */
const topOf = (target: Resolved): string =>
  target.policy.roots?.find((root) => isInside(target.real, root)) ?? target.real;

/** Runs `spec` over what its path names, on `exec`'s threads. */
export const runSearch = async (
  spec: SearchSpec,
  context: ToolContext,
  exec: SearchExecutor,
  io: SearchIo,
): Promise<ToolResult> => {
  const target = await resolvePath(spec.path, context, 'read');
  if (isRefused(target)) return target;
  if (!target.stats) return fail('not-found', `${target.display} does not exist`);
  const isDir = target.stats.isDirectory();
  if (!isDir && spec.tool === 'glob')
    return fail('not-found', `${target.display} is not a directory; pass a directory as path`);
  try {
    const dir = isDir ? target : { ...target, real: path.dirname(target.real) };
    if (!isDir) dir.display = path.dirname(target.display);
    const s = new Search(spec, dir, isDir ? topOf(target) : dir.real, context, exec, io);
    if (isDir) void s.list().catch(() => s.listing.finish());
    else s.only(path.basename(target.real));
    await s.drive();
    if (s.stop === 'canceled') return fail('canceled', `${spec.tool} was canceled`);
    return finish(s);
  } catch (error) {
    return refusal(error, target);
  }
};

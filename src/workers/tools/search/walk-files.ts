import path from 'node:path';
import type { WalkAnswer, WalkRequest } from '../../protocol/search.ts';
import { walk } from '../walk.ts';

/**
 * The files of `request.base` (relative to `request.top`) that ripgrep searches, by a walk: where
 * git cannot list them. Stops at the deadline (`stopped`), saying which directories it could not
 * read.
 */
export const walkFiles = (request: WalkRequest): WalkAnswer => {
  const files: string[] = [];
  const unreadable: string[] = [];
  const known = new Set(request.known ?? []);
  let stopped = false;
  const entries = walk({
    root: request.top,
    start: path.join(request.top, request.base),
    maxDepth: 256,
    hidden: request.hidden,
    policy: request.policy,
    inRepo: request.inRepo,
    global: request.global,
    unreadable: (rel) => unreadable.push(rel),
  });
  let n = 0;
  for (const entry of entries) {
    if (++n % 256 === 0 && Date.now() > request.deadline) {
      stopped = true;
      break;
    }
    if (entry.dirent.isFile() && !known.has(entry.rel)) files.push(entry.rel);
  }
  return { files, stopped, unreadable };
};

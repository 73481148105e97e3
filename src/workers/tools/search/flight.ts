import type { ScanResult } from '../../protocol/search.ts';
import { parentOf } from './chain.ts';
import type { Listing } from './listing.ts';

/** A chunk handed out: where it starts in the listing, and its result once back. */
export interface Flight {
  index: number;
  start: number;
  files: string[];
  /** The listing's rule version it was handed out with. */
  version: number;
  /** Its files come decided by the rules (walked, or named as the path): no rules are sent. */
  decided: boolean;
  result?: ScanResult & { slow?: number[] };
}

/** `rel`, relative to the listing's base, as relative to the search's top. */
const topRel = (listing: Listing, rel: string): string => {
  const { base } = listing;
  return base ? (rel ? `${base}/${rel}` : base) : rel;
};

/** True when an ignore file learnt of since the chunk was handed out may change its verdicts. */
export const isStale = (listing: Listing, flight: Flight): boolean => {
  if (flight.decided) return false;
  // An ignore file git has not listed (it comes later, or never: an untracked one that is
  // ignored itself, a personal .ignore) above a hit — above any file while the index comes,
  // whose order puts a directory's files with names before "." ahead of its .gitignore.
  const all = !listing.indexDone;
  const files = all ? flight.files : (flight.result?.hits ?? []).map((hit) => flight.files[hit.i]!);
  let last = '\0';
  for (const file of files) {
    const dir = parentOf(file);
    if (dir !== last) listing.probe(topRel(listing, dir));
    last = dir;
  }
  const late = listing.lateRules.filter((rule) => rule.version > flight.version);
  if (late.length === 0) return false;
  return flight.files.some((file) => {
    const rel = topRel(listing, file);
    return late.some((rule) => rule.dir === '' || rel.startsWith(`${rule.dir}/`));
  });
};

import type { ScanSkips } from '../../protocol/search.ts';
import type { ToolContext } from '../../protocol/tools.ts';
import type { ToolResult } from '../../protocol/tool-result.ts';
import { done } from '../result.ts';
import { incompleteLine, skipNotes, type Answer, type Incomplete } from './answer.ts';
import type { Listing } from './listing.ts';
import type { SearchSpec } from './spec.ts';

/** What a search ends with: what `finish` reads of it. */
interface Finished {
  spec: SearchSpec;
  answer: Answer;
  listing: Listing;
  target: { display: string };
  context: ToolContext;
  skips: ScanSkips;
  slow: string[];
  unreadable: string[];
  found: { shown: string; mtime: number }[];
  searched: number;
  stop: 'time' | 'full' | 'canceled' | undefined;
  stoppedAt: number | undefined;
  unsearchedPaths(from: number): string[];
  total(): number | null;
}

/** Where the search stopped short, as the answer states it; undefined when it is complete. */
const incompleteOf = (s: Finished): Incomplete | undefined => {
  const total = s.total();
  if (s.answer.full === 'output')
    return { reason: 'output', searched: s.searched, of: total, offset: s.answer.next! };
  if (s.stop !== 'time') return undefined;
  const paths = s.unsearchedPaths(s.stoppedAt ?? s.listing.files.length);
  return { reason: 'time', searched: s.searched, of: total, paths };
};

const emptyText = (s: Finished): string => {
  const { spec, answer } = s;
  if (spec.offset > 0 && answer.seen > 0)
    return `No entries past offset ${spec.offset} (${answer.seen} in all).`;
  const where = s.target.display === '.' ? 'the workspace' : s.target.display;
  return spec.tool === 'glob'
    ? `No files match ${spec.what} in ${where}.`
    : `No lines match ${spec.what} in ${where}.`;
};

/**
 * A search's result: its entries, preceded by `[incomplete: …]` when a budget stopped it, and
 * followed by notes on what was skipped. The structured part says the same for the UI and
 * gateway clients: `complete`, and what `incomplete` stopped it and how to continue.
 */
export const finish = (s: Finished): ToolResult => {
  const { spec, answer } = s;
  if (spec.tool === 'glob') {
    s.found.sort((a, b) => b.mtime - a.mtime || (a.shown < b.shown ? -1 : 1));
    for (const file of s.found) answer.file(file.shown);
  }
  const incomplete = incompleteOf(s);
  const head = incomplete
    ? [incompleteLine(incomplete, s.context.limits.searchSeconds, answer.maxChars)]
    : [];
  const notes = skipNotes(s.skips, s.slow, s.unreadable);
  if (answer.full === 'head')
    notes.push(
      `(head_limit ${spec.headLimit} reached; more follow: continue with offset: ${answer.next})`,
    );
  const body = answer.shown > 0 ? [...answer.lines] : [emptyText(s)];
  const found = spec.mode === 'content' ? answer.matches : answer.files;
  const structured = {
    mode: spec.mode === 'stat' ? 'files' : spec.mode,
    shown: answer.shown,
    found,
    searched: s.searched,
    listed: s.total(),
    complete: incomplete === undefined,
    ...(incomplete ? { incomplete } : {}),
    ...(answer.full === 'head' ? { next: { offset: answer.next } } : {}),
  };
  return done([...head, ...body, ...notes].join('\n'), {
    structured,
    data: { count: found, files: s.searched, truncated: incomplete !== undefined },
  });
};

import { NifflerError } from '../errors.ts';
import type { FileChange, SnapshotStore } from './snapshots.ts';
import type { TranscriptEntry } from './transcript.ts';

/** What undoing a turn changes (or changed), for the front-end to show. */
interface UndoPlan {
  turn: number;
  changes: FileChange[];
  /** The files as they are now against how they were before the turn, as a unified diff. */
  diff: string;
  applied: boolean;
  /** Files not written back: their directory now leads outside the workspace. */
  refused: string[];
}

type SnapshotEntry = Extract<TranscriptEntry, { type: 'snapshot' }>;

/** The snapshot of `turn`, or of the last turn that has one. */
const snapshotOf = (entries: readonly TranscriptEntry[], turn?: number): SnapshotEntry => {
  const snapshots = entries.filter((e): e is SnapshotEntry => e.type === 'snapshot');
  const found = [...snapshots].reverse().find((e) => turn === undefined || e.turn === turn);
  if (found) return found;
  const turns = [...new Set(snapshots.map((e) => e.turn))];
  throw new NifflerError(
    'usage',
    turn === undefined
      ? 'no turn of this session changed files (nothing to undo)'
      : `turn ${turn} has no snapshot; turns that changed files: ${turns.join(', ') || 'none'}`,
  );
};

/**
 * Undoes the file changes of a turn (the last that made any, by default): the files it created,
 * changed or deleted — by any tool, bash included — go back to how they were before it. With
 * `apply` false, only says what would change.
 */
export const undoTurn = async (
  store: SnapshotStore,
  entries: readonly TranscriptEntry[],
  options: { turn?: number; apply: boolean },
): Promise<UndoPlan> => {
  const snapshot = snapshotOf(entries, options.turn);
  let after = snapshot.after;
  if (!after) {
    // The turn never finished (the daemon was killed): compare with the files as they are now.
    const now = await store.take(`now, undoing turn ${snapshot.turn}`, snapshot.before);
    if (!now.ok)
      throw new NifflerError('internal', `cannot read the workspace's files: ${now.reason}`);
    after = now.commit;
  }
  const changes = await store.changes(snapshot.before, after);
  const diff = await store.diffToNow(
    snapshot.before,
    changes.map((c) => c.path),
  );
  const refused = options.apply ? await store.restore(snapshot.before, changes) : [];
  return { turn: snapshot.turn, changes, diff, applied: options.apply, refused };
};

import type { ToolCall } from '../../workers/protocol/api.ts';
import type { SessionLog } from './session-log.ts';
import type { SnapshotStore } from './snapshots.ts';
import type { ToolTable, TurnIO } from './tool-calls.ts';

/** What a turn keeps of its undo snapshots. */
export interface TurnSnapshot {
  number: number;
  /** The workspace's files before the turn's first call that could change them (undo). */
  snapshot?: string;
  /** Snapshots were tried and failed (said once). */
  noSnapshot?: boolean;
}

/**
 * Before the first call of a turn that may change files, the workspace is snapshotted, so
 * `/undo` can put back what the turn changes — by any tool, bash included.
 */
export const snapshotBefore = async (
  store: SnapshotStore,
  log: SessionLog,
  turn: TurnSnapshot,
  calls: ToolCall[],
  table: ToolTable,
  io: TurnIO,
): Promise<void> => {
  if (turn.snapshot || turn.noSnapshot) return;
  if (!calls.some((c) => table.get(c.name) && !table.get(c.name)!.readOnly)) return;
  const taken = await store.take(`before turn ${turn.number} of ${log.id}`);
  if (!taken.ok) {
    turn.noSnapshot = true;
    io.emit({ type: 'notice', level: 'warn', text: `no undo for this turn: ${taken.reason}` });
    return;
  }
  turn.snapshot = taken.commit;
  const skipped = taken.skipped.length ? { skipped: taken.skipped } : {};
  if (taken.skipped.length)
    io.emit({
      type: 'notice',
      level: 'info',
      text: `undo will not cover ${taken.skipped.length} large untracked file(s): ${taken.skipped.slice(0, 3).join(', ')}${taken.skipped.length > 3 ? ', …' : ''}`,
    });
  log.transcript.append({
    type: 'snapshot',
    time: new Date().toISOString(),
    turn: turn.number,
    before: taken.commit,
    ...skipped,
  });
};

/** After a turn that snapshotted its start: the files as it left them. */
export const snapshotAfter = async (
  store: SnapshotStore,
  log: SessionLog,
  turn: TurnSnapshot,
): Promise<void> => {
  if (!turn.snapshot) return;
  const taken = await store.take(`after turn ${turn.number} of ${log.id}`, turn.snapshot);
  if (taken.ok)
    log.transcript.append({
      type: 'snapshot',
      time: new Date().toISOString(),
      turn: turn.number,
      before: turn.snapshot,
      after: taken.commit,
    });
};

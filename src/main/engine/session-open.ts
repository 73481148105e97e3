import { NifflerError } from '../errors.ts';
import { VERSION } from '../version.ts';
import { compactionMarkers } from './context/markers.ts';
import { NOT_RUN, pairToolResults } from './tool-pairs.ts';
import { newSessionId, readTranscript, Transcript } from './transcript.ts';

/**
 * A session's transcript read back to be resumed: torn lines skipped, calls left without a result
 * by a session that ended mid-turn answered as not run, its compactions, the turn numbered on.
 */
export const reopenTranscript = (sessionsDir: string, id: string) => {
  const loaded = readTranscript(sessionsDir, id);
  // Numbered on from the highest turn written: a turn that failed before its start was written
  // still has its end there.
  const lastTurn = Math.max(0, ...loaded.entries.map((e) => ('turn' in e ? e.turn : 0)));
  const paired = pairToolResults(loaded.messages);
  const transcript = Transcript.open(sessionsDir, id);
  const { markers, broken } = compactionMarkers(loaded.entries);
  return { loaded, lastTurn, paired, transcript, markers, broken };
};

/** What a resume says about what it found: torn lines, calls not run, compactions unread. */
export const resumeWarnings = (
  reopened: ReturnType<typeof reopenTranscript>,
  restored: string[],
): string[] => {
  const { loaded, paired, broken } = reopened;
  const warnings = [...loaded.warnings];
  if (paired.added.length)
    warnings.push(
      `${paired.added.map((m) => m.name).join(', ')}: ${NOT_RUN} (the daemon stopped mid-turn); the model is told so`,
    );
  if (paired.dropped)
    warnings.push(`${paired.dropped} tool result(s) without their call were left out`);
  warnings.push(...restored);
  if (broken)
    warnings.push(
      `${broken} compaction record(s) of this session could not be read and were skipped: the messages they compacted are sent whole again (the next compaction makes up for it)`,
    );
  return warnings;
};

/**
 * The transcript of a new session going on from the end of turn `atTurn` of session `id`: a copy
 * of the old one up to there, so what came later — answers, a compaction — is not in it (this is
 * how a compaction is undone). The old session is left as it was. Resolves with the new id.
 */
export const forkTranscript = async (
  sessionsDir: string,
  root: string,
  id: string,
  atTurn: number,
): Promise<string> => {
  const loaded = readTranscript(sessionsDir, id);
  const turns = [
    ...new Set(loaded.entries.flatMap((e) => ('turn' in e && e.turn > 0 ? [e.turn] : []))),
  ];
  if (!turns.includes(atTurn))
    throw new NifflerError(
      'usage',
      `session ${id} has no turn ${atTurn}; its turns are ${turns.join(', ') || 'none'}`,
    );
  const forked = newSessionId();
  const transcript = Transcript.open(sessionsDir, forked);
  transcript.append({
    type: 'session',
    id: forked,
    root,
    createdAt: new Date().toISOString(),
    version: VERSION,
    forkedFrom: { id, turn: atTurn },
  });
  // Up to the end of that turn: what was written after it (a /compact, later turns) stays out.
  for (const entry of loaded.entries) {
    if (entry.type === 'session' || entry.turn > atTurn) continue;
    transcript.append(entry);
    if (entry.type === 'turn-end' && entry.turn === atTurn) break;
  }
  await transcript.close();
  return forked;
};

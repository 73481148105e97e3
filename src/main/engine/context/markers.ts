import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ChatMessage } from '../../../workers/protocol/api.ts';
import { resultText } from '../../../workers/protocol/tool-result.ts';
import { describeFsError, makeDirSync } from '../../../workers/shared/fs-errors.ts';
import type { TranscriptEntry } from '../transcript.ts';
import type { CompactionMarker } from './compaction.ts';

/**
 * Saves a cleared tool output of session `sessionId` where the model can read it again (the
 * outputs directory is made, 0700, when missing); returns the file, or why it was not saved.
 */
export const saveClearedOutput = (
  outputsDir: string,
  sessionId: string,
  callId: string,
  text: string,
): string => {
  const file = path.join(outputsDir, `${sessionId}-${callId.replace(/[^\w.-]/g, '_')}.txt`);
  try {
    makeDirSync(outputsDir);
    writeFileSync(file, text, { mode: 0o600 });
    return file;
  } catch (error) {
    return `(not saved: ${describeFsError(error)}; it is still in the session's transcript)`;
  }
};

const count = (n: unknown): boolean => Number.isInteger(n) && (n as number) >= 0;

/** The compactions a transcript records, in order; ones that cannot be read are counted, not used. */
export const compactionMarkers = (
  entries: TranscriptEntry[],
): { markers: CompactionMarker[]; broken: number } => {
  const markers: CompactionMarker[] = [];
  let broken = 0;
  for (const entry of entries) {
    if (entry.type !== 'compaction') continue;
    const marker = entry.marker as Partial<CompactionMarker> | undefined;
    const valid =
      marker &&
      Array.isArray(marker.cleared) &&
      marker.cleared.every((c) => typeof c?.id === 'string' && typeof c.file === 'string') &&
      (marker.summary === undefined ||
        (typeof marker.summary === 'string' && count(marker.summarizedTurns))) &&
      (marker.summarizedSteps === undefined ||
        (count(marker.summarizedSteps) && marker.summary !== undefined)) &&
      (marker.outline === undefined || typeof marker.outline === 'string');
    if (valid) markers.push(marker as CompactionMarker);
    else broken++;
  }
  return { markers, broken };
};

/**
 * The cleared outputs whose files are gone (saved outputs are pruned after
 * `tools.output.maxAgeDays`, or deleted by hand), written again from the transcript, which keeps
 * every output: a marker naming where each now is (when that changed), and what to tell the user.
 */
export const restoreClearedOutputs = (
  markers: readonly CompactionMarker[],
  messages: readonly ChatMessage[],
  save: (callId: string, text: string) => string,
): { marker?: CompactionMarker; warnings: string[] } => {
  const files = new Map(markers.flatMap((m) => m.cleared.map((c) => [c.id, c.file] as const)));
  const missing = [...files].filter(([, file]) => !existsSync(file));
  if (missing.length === 0) return { warnings: [] };
  const outputs = new Map(
    messages.flatMap((m) => (m.role === 'tool' ? [[m.toolCallId, m.result] as const] : [])),
  );
  const moved: { id: string; file: string }[] = [];
  const unsaved: string[] = [];
  let lost = 0;
  for (const [id, file] of missing) {
    const result = outputs.get(id);
    if (!result) {
      lost++;
      continue;
    }
    const saved = save(id, resultText(result));
    if (!existsSync(saved)) unsaved.push(saved);
    else if (saved !== file) moved.push({ id, file: saved });
  }
  const warnings = [
    `${missing.length} cleared tool output(s) of this session had lost their files (saved outputs are pruned after tools.output.maxAgeDays): ` +
      `${missing.length - lost - unsaved.length} written again from the transcript` +
      (unsaved.length ? `, ${unsaved.length} could not be: ${unsaved[0]}` : '') +
      (lost
        ? `, ${lost} not in the transcript either (the model is told the file is gone if it reads one)`
        : ''),
  ];
  return { ...(moved.length ? { marker: { cleared: moved } } : {}), warnings };
};

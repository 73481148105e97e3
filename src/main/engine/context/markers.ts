import type { TranscriptEntry } from '../transcript.ts';
import type { CompactionMarker } from './compaction.ts';

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
        (typeof marker.summary === 'string' && Number.isInteger(marker.summarizedTurns)));
    if (valid) markers.push(marker as CompactionMarker);
    else broken++;
  }
  return { markers, broken };
};

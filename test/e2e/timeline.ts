import { readFileSync } from 'node:fs';

/** The steps of a timeline (workers/shared/timeline.ts, NIFFLER_TIMELINE), in the order taken. */
export const timelineSteps = (file: string): string[] =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => line.split(' ').slice(2).join(' '));

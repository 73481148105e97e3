import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ToolContext } from '../protocol/tools.ts';

/** A fresh file under the outputs directory (0700) for the full output of one call. */
export const outputFile = async (context: ToolContext, tool: string): Promise<string> => {
  await mkdir(context.outputsDir, { recursive: true, mode: 0o700 });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  return path.join(context.outputsDir, `${tool}-${stamp}-${randomBytes(3).toString('hex')}.txt`);
};

/**
 * The lines in `text`: one per `\n`, plus a last line not ended by one. So `'a\nb\n'` and
 * `'a\nb'` both have 2 lines, and `''` has none.
 */
export const countLines = (text: string): number => {
  let lines = text.length > 0 && !text.endsWith('\n') ? 1 : 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lines++;
  return lines;
};

/** The note put where output was cut: how much, where the rest is, how to read it. */
export const cutNote = (shown: number, total: number, lines: number, savedTo: string): string =>
  `\n[… output cut: ${shown} of ${total} characters shown. The full output (${lines} lines) ` +
  `is saved in ${savedTo}; read it in pages with read_file { "path": ${JSON.stringify(savedTo)}, ` +
  `"offset": N, "limit": 500 }]\n`;

/**
 * Caps `text` at `limits.maxChars`. When it is longer, the whole text is saved under the outputs
 * directory (mode 0600) and the returned output is its start followed by a note saying where and
 * how to page through the rest.
 */
export const capOutput = async (
  text: string,
  context: ToolContext,
  tool: string,
): Promise<{ output: string; savedTo?: string }> => {
  const max = context.limits.maxChars;
  if (text.length <= max) return { output: text };
  const savedTo = await outputFile(context, tool);
  await writeFile(savedTo, text, { mode: 0o600 });
  const note = cutNote(max, text.length, countLines(text), savedTo);
  return { output: text.slice(0, max) + note, savedTo };
};

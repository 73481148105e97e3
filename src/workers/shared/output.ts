import { randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { describeFsError, makeDirSync } from './fs-errors.ts';
import path from 'node:path';

/** Where a cut output is saved and how much of it the model is shown. */
export interface CapOptions {
  /** Characters of output given to the model. */
  maxChars: number;
  /** Where the whole output is saved when it is cut. */
  outputsDir: string;
  /** Names the saved file: the tool, or the MCP server and tool. */
  label: string;
  /** Which note follows the preview: `full` (the default) or `short`. */
  note?: 'full' | 'short';
}

/**
 * A fresh name under `outputsDir` for the whole output of one call:
 * `<label>-<ISO time>-<6 hex>.txt`, the label reduced to `[A-Za-z0-9_-]` and 80 characters.
 */
export const outputName = (outputsDir: string, label: string): string => {
  const safe = label.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 80);
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  return path.join(outputsDir, `${safe}-${stamp}-${randomBytes(3).toString('hex')}.txt`);
};

/** `outputName`, with `outputsDir` made (0700) first; fails with the real errno. */
export const outputFile = async (outputsDir: string, label: string): Promise<string> => {
  makeDirSync(outputsDir);
  return outputName(outputsDir, label);
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
 * `cutNote` in fewer words, naming the saved file once: for results put after the preview as
 * they are (MCP results), where the note should stay short.
 */
export const shortCutNote = (shown: number, total: number, savedTo: string): string =>
  `\n\n[output cut at ${shown} of ${total} characters; the whole output is saved in ${savedTo}; ` +
  `page it with read_file offset/limit]`;

/**
 * Caps `text` at `options.maxChars`. When it is longer, the whole text is saved under the outputs
 * directory (mode 0600) and the returned output is its start followed by a note saying where and
 * how to page through the rest — or, when the disk will not take it, why the rest is lost.
 */
export const capOutput = async (
  text: string,
  options: CapOptions,
): Promise<{ output: string; savedTo?: string }> => {
  const max = options.maxChars;
  if (text.length <= max) return { output: text };
  let savedTo: string | undefined;
  try {
    savedTo = await outputFile(options.outputsDir, options.label);
    await writeFile(savedTo, text, { mode: 0o600 });
  } catch (error) {
    if (savedTo) await rm(savedTo, { force: true });
    return {
      output: `${text.slice(0, max)}\n\n[output cut at ${max} of ${text.length} characters; the rest is lost: could not save it in ${options.outputsDir}: ${describeFsError(error)}]`,
    };
  }
  const note =
    options.note === 'short'
      ? shortCutNote(max, text.length, savedTo)
      : cutNote(max, text.length, countLines(text), savedTo);
  return { output: text.slice(0, max) + note, savedTo };
};

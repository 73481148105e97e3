import type { ToolContext } from '../protocol/tools.ts';
import * as shared from '../shared/output.ts';

export { countLines, cutNote } from '../shared/output.ts';

/** A fresh file under the outputs directory (0700) for the full output of one call. */
export const outputFile = (context: ToolContext, tool: string): Promise<string> =>
  shared.outputFile(context.outputsDir, tool);

/**
 * Caps `text` at `limits.maxChars`. When it is longer, the whole text is saved under the outputs
 * directory (mode 0600) and the returned output is its start followed by a note saying where and
 * how to page through the rest.
 */
export const capOutput = (
  text: string,
  context: ToolContext,
  tool: string,
): Promise<{ output: string; savedTo?: string }> =>
  shared.capOutput(text, {
    maxChars: context.limits.maxChars,
    outputsDir: context.outputsDir,
    label: tool,
  });

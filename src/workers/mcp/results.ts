import { createReadStream, createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { finished } from 'node:stream/promises';
import type { CallToolResult } from '@modelcontextprotocol/client';
import type { ToolContent, ToolResult } from '../protocol/tool-result.ts';
import { describeFsError } from '../shared/fs-errors.ts';
import { capOutput, outputFile, shortCutNote } from '../shared/output.ts';
import { readSpilled, type SpillInfo } from './spill.ts';

type McpContent = CallToolResult['content'][number];

interface ResultOptions {
  maxChars: number;
  outputsDir: string;
  /** Used in the saved file's name. */
  label: string;
  /** A problem with `structuredContent` against `outputSchema`, when there is one. */
  schemaProblem?: string;
}

const bytesOf = (base64: string): number => Math.floor((base64.length * 3) / 4);

/** One MCP content block as `ToolContent` plus the line of text the model reads for it. */
interface Converted {
  content: ToolContent;
  text: string;
  /** The text was long: `text` is its start, the whole of it is in a file (ProcessTransport). */
  spilled?: SpillInfo;
}

const convert = (block: McpContent): Converted => {
  switch (block.type) {
    case 'text': {
      const spilled = readSpilled(block.text);
      if (spilled)
        return {
          content: { type: 'text', text: spilled.start },
          text: spilled.start,
          spilled: spilled.info,
        };
      return { content: { type: 'text', text: block.text }, text: block.text };
    }
    case 'image':
    case 'audio':
      return {
        content: { type: block.type, data: block.data, mimeType: block.mimeType },
        text: `[${block.type}: ${block.mimeType}, ${bytesOf(block.data)} bytes]`,
      };
    case 'resource_link':
      return {
        content: {
          type: 'resource-link',
          uri: block.uri,
          name: block.name,
          ...(block.mimeType ? { mimeType: block.mimeType } : {}),
          ...(block.description ? { description: block.description } : {}),
        },
        text: `[resource link: ${block.name} ${block.uri}${block.description ? ` — ${block.description}` : ''}]`,
      };
    case 'resource': {
      const { resource } = block;
      const text =
        'text' in resource && typeof resource.text === 'string' ? resource.text : undefined;
      const blob =
        'blob' in resource && typeof resource.blob === 'string' ? resource.blob : undefined;
      return {
        content: {
          type: 'resource',
          uri: resource.uri,
          ...(resource.mimeType ? { mimeType: resource.mimeType } : {}),
          ...(text !== undefined ? { text } : {}),
          ...(blob !== undefined ? { blob } : {}),
        },
        text:
          text !== undefined
            ? `[resource ${resource.uri}]\n${text}`
            : `[resource ${resource.uri}${resource.mimeType ? ` (${resource.mimeType})` : ''}, ${bytesOf(blob ?? '')} bytes]`,
      };
    }
  }
};

/**
 * Normalizes an MCP `tools/call` result to the shared `ToolResult`: the text the model reads
 * (text blocks joined; other blocks described), the blocks themselves for the UI and vision
 * models, `structuredContent`, and `isError` as `ok: false` with code `tool-error`.
 */
export const normalizeResult = async (
  result: CallToolResult,
  options: ResultOptions,
): Promise<ToolResult> => {
  const converted = (result.content ?? []).map(convert);
  let text = converted.map((c) => c.text).join('\n');
  if (text === '' && result.structuredContent !== undefined)
    text = JSON.stringify(result.structuredContent, null, 2);
  const { output, savedTo } = converted.some((c) => c.spilled)
    ? await joinSpilled(converted, options)
    : await capOutput(text, {
        maxChars: options.maxChars,
        outputsDir: options.outputsDir,
        label: options.label,
        note: 'short',
      });
  const content = converted
    .map((c) => c.content)
    .filter((c) => savedTo === undefined || c.type !== 'text');
  if (result.isError === true)
    return {
      ok: false,
      error: { code: 'tool-error', message: firstLine(output) || 'the tool reported an error' },
      output,
      ...(content.length ? { content } : {}),
    };
  if (options.schemaProblem !== undefined)
    return {
      ok: false,
      error: {
        code: 'tool-error',
        message: `the tool's structured result does not match its output schema: ${options.schemaProblem}`,
      },
      output,
    };
  return {
    ok: true,
    output,
    ...(content.length ? { content } : {}),
    ...(result.structuredContent !== undefined ? { structured: result.structuredContent } : {}),
    ...(savedTo ? { savedTo } : {}),
  };
};

/**
 * The output of a result whose long text went to a file as it arrived: the start the model is
 * shown, and the file that holds the whole output (the text blocks joined) — the spilled file
 * itself when it is the only block, else one file made from all of them.
 */
const joinSpilled = async (
  converted: Converted[],
  options: ResultOptions,
): Promise<{ output: string; savedTo?: string }> => {
  const total = converted.reduce((n, c) => n + (c.spilled?.chars ?? c.text.length) + 1, -1);
  const firstSpilled = converted.findIndex((c) => c.spilled);
  const shown = converted
    .slice(0, firstSpilled + 1)
    .map((c) => c.text)
    .join('\n')
    .slice(0, options.maxChars);
  const failed = converted.find((c) => c.spilled?.error)?.spilled?.error;
  let savedTo: string | undefined;
  try {
    if (failed) throw new Error(failed);
    savedTo = await outputFile(options.outputsDir, options.label);
    const only = converted.length === 1 ? converted[0]!.spilled : undefined;
    if (only) await rename(only.file, savedTo);
    else await writeJoined(converted, savedTo);
  } catch (error) {
    const why =
      failed ?? `could not save it in ${savedTo ?? options.outputsDir}: ${describeFsError(error)}`;
    return {
      output: `${shown}\n\n[output cut at ${shown.length} of ${total} characters; the rest is lost: ${why}]`,
    };
  } finally {
    for (const c of converted) if (c.spilled) await rm(c.spilled.file, { force: true });
  }
  return { output: shown + shortCutNote(shown.length, total, savedTo), savedTo };
};

/** Writes the text blocks to `file`, one after the other, a spilled one copied from its file. */
const writeJoined = async (converted: Converted[], file: string): Promise<void> => {
  const out = createWriteStream(file, { mode: 0o600 });
  const failed = new Promise<never>((_resolve, reject) => out.once('error', reject));
  failed.catch(() => {});
  for (const [i, c] of converted.entries()) {
    if (i > 0) out.write('\n');
    if (!c.spilled) {
      out.write(c.text);
      continue;
    }
    const input = createReadStream(c.spilled.file);
    input.pipe(out, { end: false });
    await Promise.race([finished(input), failed]);
  }
  out.end();
  await Promise.race([finished(out), failed]);
};

const firstLine = (text: string): string => {
  const line = text.split('\n', 1)[0] ?? '';
  return line.length > 500 ? `${line.slice(0, 500)}…` : line;
};

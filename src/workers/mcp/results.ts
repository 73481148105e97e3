import type { CallToolResult } from '@modelcontextprotocol/client';
import type { ToolContent, ToolResult } from '../protocol/tool-result.ts';
import { capOutput } from '../shared/output.ts';

type McpContent = CallToolResult['content'][number];

export interface ResultOptions {
  maxChars: number;
  outputsDir: string;
  /** Used in the saved file's name. */
  label: string;
  /** A problem with `structuredContent` against `outputSchema`, when there is one. */
  schemaProblem?: string;
}

const bytesOf = (base64: string): number => Math.floor((base64.length * 3) / 4);

/** One MCP content block as `ToolContent` plus the line of text the model reads for it. */
const convert = (block: McpContent): { content: ToolContent; text: string } => {
  switch (block.type) {
    case 'text':
      return { content: { type: 'text', text: block.text }, text: block.text };
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
  const { output, savedTo } = await capOutput(text, {
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

const firstLine = (text: string): string => {
  const line = text.split('\n', 1)[0] ?? '';
  return line.length > 500 ? `${line.slice(0, 500)}…` : line;
};

import type { CallToolResult } from '@modelcontextprotocol/server';
import type {
  McpElicitation,
  McpElicitationAnswer,
  McpSamplingAnswer,
} from '../../workers/protocol/mcp.ts';
import {
  resultText,
  type ToolContent,
  type ToolResult,
} from '../../workers/protocol/tool-result.ts';

type Block = CallToolResult['content'][number];

const toBlock = (content: ToolContent): Block => {
  switch (content.type) {
    case 'text':
      return { type: 'text', text: content.text };
    case 'image':
    case 'audio':
      return { type: content.type, data: content.data, mimeType: content.mimeType };
    case 'resource-link':
      return {
        type: 'resource_link',
        uri: content.uri,
        name: content.name ?? content.uri,
        ...(content.mimeType ? { mimeType: content.mimeType } : {}),
        ...(content.description ? { description: content.description } : {}),
      };
    case 'resource': {
      const base = {
        uri: content.uri,
        ...(content.mimeType ? { mimeType: content.mimeType } : {}),
      };
      return {
        type: 'resource',
        resource:
          content.blob !== undefined
            ? { ...base, blob: content.blob }
            : { ...base, text: content.text ?? '' },
      };
    }
  }
};

/**
 * A tool's result as MCP content for a gateway consumer: its blocks as the tool gave them (text
 * that was cut to the output cap is the cut text with its note), structured content, and any
 * failure — a tool's error, a timeout, a crashed server — as `isError` with the words the model
 * would read.
 */
export const toCallToolResult = (result: ToolResult): CallToolResult => {
  const blocks = (result.content ?? []).map(toBlock);
  const hasText = blocks.some((b) => b.type === 'text');
  const lead = result.ok ? result.output : resultText(result);
  // The text stands first when blocks lack it: cut output (its blocks were left out), a failure.
  const content: Block[] =
    (!hasText || !result.ok) && lead !== '' ? [{ type: 'text', text: lead }, ...blocks] : blocks;
  if (!result.ok) return { content, isError: true };
  return {
    content: content.length ? content : [{ type: 'text', text: '' }],
    ...(result.structured !== undefined ? { structuredContent: result.structured } : {}),
  };
};

/** A server's form elicitation as the gateway asks its consumer. */
export const elicitParams = (server: string, elicitation: McpElicitation) => ({
  message: `${server}: ${elicitation.message}`,
  requestedSchema: elicitation.requestedSchema as never,
});

type Primitive = string | number | boolean | string[];

const primitives = (content: Record<string, unknown> | undefined): Record<string, Primitive> =>
  Object.fromEntries(
    Object.entries(content ?? {}).filter(
      ([, v]) =>
        typeof v === 'string' ||
        typeof v === 'number' ||
        typeof v === 'boolean' ||
        (Array.isArray(v) && v.every((x) => typeof x === 'string')),
    ),
  ) as Record<string, Primitive>;

/** The consumer's answer to an elicitation, as the server that asked gets it. */
export const elicitationAnswer = (response: unknown): McpElicitationAnswer => {
  const r = (response ?? {}) as { action?: string; content?: Record<string, unknown> };
  if (r.action === 'accept') return { action: 'accept', content: primitives(r.content) };
  return {
    action: r.action === 'decline' ? 'decline' : 'cancel',
    reason: 'the gateway consumer did not accept',
  };
};

/** The consumer's answer to a sampling request (text only), as the server that asked gets it. */
export const samplingAnswer = (response: unknown): McpSamplingAnswer => {
  const r = (response ?? {}) as {
    model?: string;
    content?: { type?: string; text?: string } | { type?: string; text?: string }[];
    stopReason?: string;
  };
  const block = Array.isArray(r.content) ? r.content[0] : r.content;
  if (!block || block.type !== 'text' || typeof block.text !== 'string')
    return { ok: false, reason: 'the gateway consumer answered sampling without text' };
  return {
    ok: true,
    model: r.model ?? 'unknown',
    role: 'assistant',
    content: { type: 'text', text: block.text },
    ...(r.stopReason ? { stopReason: r.stopReason } : {}),
  };
};

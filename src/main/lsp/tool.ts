import path from 'node:path';
import type { LspQuery } from '../../workers/protocol/lsp.ts';
import { fail, type ToolResult } from '../../workers/protocol/tool-result.ts';
import { NifflerError } from '../errors.ts';
import type { ToolEntry } from '../calls/types.ts';

/** How long the `lsp` tool waits for an answer (references of a large project take a while). */
const QUERY_MS = 15_000;

const OPERATIONS: readonly LspQuery['operation'][] = [
  'definition',
  'references',
  'hover',
  'symbols',
  'diagnostics',
];

const DESCRIPTION = `Ask the workspace's language servers (read-only). Operations:
- definition / references / hover: at a file's line and column (1-based), or of a symbol by name (with file to pick among several).
- symbols: a file's outline (with file), or the workspace's symbols matching query.
- diagnostics: a file's errors and warnings now (with file), or those the servers know of the workspace.
Answers are compact: file:line:column and the line's text.`;

const INPUT_SCHEMA = {
  type: 'object',
  properties: {
    operation: { type: 'string', enum: OPERATIONS },
    file: { type: 'string', description: 'a path relative to the workspace root' },
    line: { type: 'integer', minimum: 1, description: '1-based line' },
    column: { type: 'integer', minimum: 1, description: '1-based column (default 1)' },
    symbol: {
      type: 'string',
      description: "a symbol's name (Class.method for a member), instead of line and column",
    },
    query: { type: 'string', description: "symbols without file: what the symbols' names contain" },
  },
  required: ['operation'],
  additionalProperties: false,
} as const;

/** The arguments as a question, or what is wrong with them. */
const parseArgs = (args: Record<string, unknown>, root: string): LspQuery | string => {
  const { operation, file, line, column, symbol, query } = args;
  if (typeof operation !== 'string' || !OPERATIONS.includes(operation as LspQuery['operation']))
    return `operation must be one of ${OPERATIONS.join(', ')}`;
  for (const [key, value] of Object.entries({ file, symbol, query }))
    if (value !== undefined && typeof value !== 'string') return `${key} must be a string`;
  for (const [key, value] of Object.entries({ line, column }))
    if (value !== undefined && (!Number.isInteger(value) || (value as number) < 1))
      return `${key} must be a whole number from 1`;
  if (line !== undefined && file === undefined) return 'line needs file: the file it is a line of';
  return {
    operation: operation as LspQuery['operation'],
    ...(typeof file === 'string' ? { file: path.resolve(root, file) } : {}),
    ...(typeof line === 'number' ? { line } : {}),
    ...(typeof column === 'number' ? { column } : {}),
    ...(typeof symbol === 'string' ? { symbol } : {}),
    ...(typeof query === 'string' ? { query } : {}),
  };
};

/**
 * The `lsp` tool: read-only, answered by the engine through the language servers, approved as
 * a read-only MCP tool is (allowed unless a policy rule says otherwise: `deny` wins).
 */
export const lspToolEntry = (
  root: string,
  ask: (query: LspQuery, deadline: number) => Promise<string>,
): ToolEntry => ({
  spec: { name: 'lsp', description: DESCRIPTION, inputSchema: INPUT_SCHEMA },
  kind: 'engine',
  readOnly: true,
  destructive: false,
  asks: true,
  run: async (args): Promise<ToolResult> => {
    const query = parseArgs(args, root);
    if (typeof query === 'string') return fail('invalid-args', query);
    try {
      return { ok: true, output: await ask(query, Date.now() + QUERY_MS) };
    } catch (error) {
      const e = error instanceof NifflerError ? error : undefined;
      const code =
        e?.code === 'usage' ? 'invalid-args' : e?.code === 'timeout' ? 'timeout' : 'tool-error';
      return fail(code, (error as Error).message);
    }
  },
});

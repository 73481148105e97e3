import { createHash } from 'node:crypto';

/**
 * The file, under the auth directory, that keeps one server URL's OAuth registration and tokens.
 * The MCP worker writes it; `niffler mcp logout` (in main) removes it.
 */
export const authFileName = (url: string): string =>
  `${createHash('sha256').update(new URL(url).href).digest('hex').slice(0, 32)}.json`;

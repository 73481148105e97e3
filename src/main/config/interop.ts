import { NifflerError } from '../errors.ts';
import { tildify, type Env } from '../paths.ts';
import { describeValue, type ParsedFile } from './source.ts';

const TRANSPORTS: Record<string, string> = {
  stdio: 'stdio',
  http: 'http',
  'streamable-http': 'http',
  streamableHttp: 'http',
  sse: 'sse',
  ws: 'ws',
  websocket: 'ws',
};

const KEPT = new Set(['command', 'args', 'env', 'url', 'headers']);
const RENAMED: Record<string, string> = { cwd: 'workingDir', type: 'transport' };

/**
 * Converts a Claude Desktop / Claude Code / `.mcp.json` file (`{"mcpServers": {name: {command,
 * args, env} | {type, url, headers}}}`) into niffler's `mcpServers`. Other top-level keys of those
 * apps are ignored; unknown keys inside a server entry are dropped with a warning, so an existing
 * file works unchanged.
 */
export const importClaudeFormat = (file: ParsedFile, warnings: string[], env?: Env): ParsedFile => {
  const shown = tildify(file.source.file ?? '', env);
  const servers = file.data['mcpServers'];
  if (servers === undefined) return { ...file, data: {} };
  if (typeof servers !== 'object' || servers === null || Array.isArray(servers)) {
    const line = file.lineOf(['mcpServers']);
    throw new NifflerError(
      'config-invalid',
      `${shown}:${line ?? 1} mcpServers: expected a mapping of server names to entries, got ${describeValue(servers)}`,
      { file: file.source.file, line },
    );
  }
  const converted: Record<string, Record<string, unknown>> = {};
  for (const [name, entry] of Object.entries(servers as Record<string, unknown>)) {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      const line = file.lineOf(['mcpServers', name]);
      throw new NifflerError(
        'config-invalid',
        `${shown}:${line ?? 1} mcpServers.${name}: expected a mapping with command or url, got ${describeValue(entry)}`,
        { file: file.source.file, line },
      );
    }
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(entry)) {
      if (KEPT.has(key)) out[key] = value;
      else if (key === 'type' && typeof value === 'string' && TRANSPORTS[value])
        out['transport'] = TRANSPORTS[value];
      else if (key === 'type') out['transport'] = value;
      else if (RENAMED[key]) out[RENAMED[key]] = value;
      else if (key === 'disabled') out['enabled'] = value !== true;
      else
        warnings.push(
          `${shown}:${file.lineOf(['mcpServers', name, key]) ?? 1} mcpServers.${name}.${key}: not used by niffler; ignored`,
        );
    }
    converted[name] = out;
  }
  const lineOf: ParsedFile['lineOf'] = (path) => {
    const [head, name, key, ...rest] = path;
    if (head === 'mcpServers' && key === 'transport')
      return file.lineOf(['mcpServers', name ?? '', 'type']);
    if (head === 'mcpServers' && key === 'workingDir')
      return file.lineOf(['mcpServers', name ?? '', 'cwd', ...rest]);
    return file.lineOf(path);
  };
  return { source: file.source, data: { mcpServers: converted }, lineOf };
};

import path from 'node:path';
import * as jsonc from 'jsonc-parser';
import { parse as parseToml, TomlError } from 'smol-toml';
import { readBoundedFileSync } from '../../workers/shared/bounded-read.ts';
import { ConfinedError } from '../../workers/shared/confine.ts';
import { isObject } from '../../workers/shared/is-object.ts';
import { NifflerError } from '../errors.ts';
import { expandHome, tildify, type Env } from '../paths.ts';
import type { ParsedFile, SourceKind } from './source.ts';

// The MCP servers of other assistants' config files, read as those tools write them: Codex's
// `config.toml` `[mcp_servers.*]` (TOML, by smol-toml), Gemini CLI's `settings.json` `mcpServers`
// and opencode's `opencode.json` `mcp` (JSON with comments, by jsonc-parser), each from its
// documented places, user and repository. Each becomes a layer of niffler's `mcpServers`; a
// repository's is trust-gated like `.mcp.json`. Fields niffler has no use for are notes.

/** The assistants whose files are read; `peers.<name>: false` in your config turns one off. */
type Peer = 'codex' | 'gemini' | 'opencode';

/** One of those files: where, whose, and whether it is yours or the repository's. */
interface PeerFile {
  peer: Peer;
  kind: SourceKind;
  file: string;
}

const MAX_BYTES = 4 * 1024 * 1024;

/** Where each assistant keeps its user and project files (their documented places). */
export const peerFiles = (root: string, env: Env, off: ReadonlySet<string>): PeerFile[] => {
  const codexHome = env['CODEX_HOME']
    ? path.resolve(env['CODEX_HOME'])
    : expandHome('~/.codex', env);
  const xdg = env['XDG_CONFIG_HOME']
    ? path.resolve(env['XDG_CONFIG_HOME'])
    : expandHome('~/.config', env);
  const all: PeerFile[] = [
    { peer: 'codex', kind: 'codex-user', file: path.join(codexHome, 'config.toml') },
    { peer: 'gemini', kind: 'gemini-user', file: expandHome('~/.gemini/settings.json', env) },
    { peer: 'opencode', kind: 'opencode-user', file: path.join(xdg, 'opencode', 'opencode.json') },
    { peer: 'codex', kind: 'codex-project', file: path.join(root, '.codex', 'config.toml') },
    { peer: 'gemini', kind: 'gemini-project', file: path.join(root, '.gemini', 'settings.json') },
    { peer: 'opencode', kind: 'opencode-project', file: path.join(root, 'opencode.json') },
  ];
  return all.filter((f) => !off.has(f.peer));
};

/** The source kinds of a repository's peer files (they need trust). */
export const PEER_REPO_KINDS = ['codex-project', 'gemini-project', 'opencode-project'] as const;

type Entry = Record<string, unknown>;
type Note = (name: string, key: string, text?: string) => void;

/**
 * `$VAR` and `${VAR}` (Gemini CLI) and `{env:VAR}` (opencode) as niffler's `${VAR:-}`: a variable
 * that is not set is empty, and the server says what it misses, rather than niffler refusing the
 * whole config for another tool's file.
 */
const varsOf = (value: unknown, peer: Peer): unknown => {
  if (typeof value === 'string')
    return peer === 'gemini'
      ? value.replace(
          /\$\{([A-Za-z_]\w*)\}|\$([A-Za-z_]\w*)/g,
          (_m, a?: string, b?: string) => `\${${a ?? b}:-}`,
        )
      : peer === 'opencode'
        ? value.replace(/\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g, '${$1:-}')
        : value;
  if (Array.isArray(value)) return value.map((v) => varsOf(v, peer));
  if (isObject(value))
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, varsOf(v, peer)]));
  return value;
};

const strings = (value: unknown): Record<string, string> | undefined =>
  isObject(value)
    ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, String(v)]))
    : undefined;

/** A Codex `[mcp_servers.NAME]` table as a niffler server entry. */
const fromCodex = (name: string, entry: Entry, note: Note): Entry => {
  const out: Entry = {};
  const headers: Record<string, string> = {};
  for (const [key, value] of Object.entries(entry)) {
    if (key === 'command' || key === 'args' || key === 'url' || key === 'enabled') out[key] = value;
    else if (key === 'env') out['env'] = strings(value);
    else if (key === 'cwd') out['workingDir'] = value;
    else if (key === 'startup_timeout_sec') out['startupTimeout'] = value;
    else if (key === 'startup_timeout_ms' && typeof value === 'number')
      out['startupTimeout'] = value / 1000;
    else if (key === 'tool_timeout_sec') out['timeout'] = value;
    else if (key === 'enabled_tools') out['includeTools'] = value;
    else if (key === 'disabled_tools') out['excludeTools'] = value;
    else if (key === 'http_headers') Object.assign(headers, strings(value));
    else if (key === 'env_http_headers' && isObject(value))
      for (const [header, variable] of Object.entries(value))
        headers[header] = `\${${String(variable)}:-}`;
    else if (key === 'bearer_token_env_var')
      headers['Authorization'] = `Bearer \${${String(value)}:-}`;
    else if (key === 'bearer_token') headers['Authorization'] = `Bearer ${String(value)}`;
    else if (key === 'env_vars' && Array.isArray(value))
      out['env'] = {
        ...Object.fromEntries(value.map((v) => [String(v), `\${${String(v)}:-}`])),
        ...(out['env'] as object),
      };
    else note(name, key);
  }
  if (Object.keys(headers).length) out['headers'] = headers;
  return out;
};

/** A Gemini CLI `mcpServers` entry as a niffler server entry. */
const fromGemini = (name: string, entry: Entry, note: Note): Entry => {
  const out: Entry = {};
  for (const [key, value] of Object.entries(entry)) {
    if (
      ['command', 'args', 'env', 'headers', 'trust', 'includeTools', 'excludeTools'].includes(key)
    )
      out[key] = value;
    else if (key === 'cwd') out['workingDir'] = value;
    else if (key === 'url') Object.assign(out, { url: value, transport: 'sse' });
    else if (key === 'httpUrl') Object.assign(out, { url: value, transport: 'http' });
    else if (key === 'timeout' && typeof value === 'number') out['timeout'] = value / 1000;
    else note(name, key);
  }
  return out;
};

/** An opencode `mcp` entry (`type: local` with a command list, or `remote`) as a niffler one. */
const fromOpencode = (name: string, entry: Entry, note: Note): Entry => {
  const out: Entry = {};
  for (const [key, value] of Object.entries(entry)) {
    if (key === 'type') continue;
    if (key === 'command' && Array.isArray(value) && value.length) {
      out['command'] = String(value[0]);
      out['args'] = value.slice(1).map(String);
    } else if (key === 'environment') out['env'] = strings(value);
    else if (key === 'url' || key === 'headers' || key === 'enabled') out[key] = value;
    else if (key === 'timeout' && typeof value === 'number') out['startupTimeout'] = value / 1000;
    else note(name, key);
  }
  return out;
};

const CONVERT = { codex: fromCodex, gemini: fromGemini, opencode: fromOpencode };

/** Where each peer keeps its servers in its file. */
const SERVERS_KEY: Record<Peer, string> = {
  codex: 'mcp_servers',
  gemini: 'mcpServers',
  opencode: 'mcp',
};

/** A file's text, or undefined when there is none. */
const readText = (file: string, env: Env): string | undefined => {
  try {
    return readBoundedFileSync(file, { maxBytes: MAX_BYTES, shown: tildify(file, env) });
  } catch (error) {
    if (error instanceof ConfinedError && error.code === 'not-found') return undefined;
    throw new NifflerError(
      'config-invalid',
      `${tildify(file, env)}: cannot read the file (${(error as Error).message}); check its permissions`,
      { file },
      { cause: error },
    );
  }
};

const lineAt = (text: string, offset: number): number => text.slice(0, offset).split('\n').length;

/** The parsed file and a way to a server entry's line. */
const parsePeer = (
  peer: PeerFile,
  text: string,
  env: Env,
): { data: Record<string, unknown>; lineOfServer: (name: string) => number | undefined } => {
  const shown = tildify(peer.file, env);
  if (peer.peer === 'codex') {
    try {
      const data = parseToml(text) as Record<string, unknown>;
      const lines = text.split('\n');
      return {
        data,
        lineOfServer: (name) => {
          const header = new RegExp(
            `^\\s*\\[\\s*mcp_servers\\s*\\.\\s*("${name}"|'${name}'|${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')})\\s*\\]`,
          );
          const at = lines.findIndex((line) => header.test(line));
          return at >= 0 ? at + 1 : undefined;
        },
      };
    } catch (error) {
      const where = error instanceof TomlError ? `:${error.line}` : '';
      throw new NifflerError(
        'config-invalid',
        `${shown}${where}: not valid TOML (${(error as Error).message.split('\n')[0]}); fix the file, or turn Codex's files off with peers.codex: false`,
        { file: peer.file },
      );
    }
  }
  const errors: jsonc.ParseError[] = [];
  const tree = jsonc.parseTree(text, errors, { allowTrailingComma: true });
  if (errors.length || !tree) {
    const first = errors[0];
    const line = first ? lineAt(text, first.offset) : 1;
    const what = first ? jsonc.printParseErrorCode(first.error) : 'empty';
    throw new NifflerError(
      'config-invalid',
      `${shown}:${line}: not valid JSON (${what}); fix the file, or turn its reading off with peers.${peer.peer}: false`,
      { file: peer.file },
    );
  }
  const data = jsonc.getNodeValue(tree) as unknown;
  const key = SERVERS_KEY[peer.peer];
  return {
    data: isObject(data) ? data : {},
    lineOfServer: (name) => {
      const node = jsonc.findNodeAtLocation(tree, [key, name]);
      return node ? lineAt(text, node.offset) : undefined;
    },
  };
};

/**
 * One peer file's servers as a niffler layer (`mcpServers`, niffler's fields), or undefined when
 * the file is absent. Fields niffler does not use are notes in `warnings`; a file that does not
 * parse is an error naming its line and the way to turn the source off.
 */
export const readPeerFile = (
  peer: PeerFile,
  env: Env,
  warnings: string[],
): ParsedFile | undefined => {
  const text = readText(peer.file, env);
  if (text === undefined) return undefined;
  const { data, lineOfServer } = parsePeer(peer, text, env);
  const shown = tildify(peer.file, env);
  const servers = data[SERVERS_KEY[peer.peer]];
  const converted: Record<string, Entry> = {};
  const note: Note = (name, key, text = 'not used by niffler; ignored') =>
    warnings.push(
      `${shown}:${lineOfServer(name) ?? 1} ${SERVERS_KEY[peer.peer]}.${name}.${key}: ${text}`,
    );
  if (isObject(servers))
    for (const [name, entry] of Object.entries(servers))
      if (isObject(entry))
        converted[name] = CONVERT[peer.peer](name, varsOf(entry, peer.peer) as Entry, note);
  return {
    source: { kind: peer.kind, file: peer.file },
    data: Object.keys(converted).length ? { mcpServers: converted } : {},
    lineOf: (at) => (at[0] === 'mcpServers' && at.length > 1 ? lineOfServer(String(at[1])) : 1),
  };
};

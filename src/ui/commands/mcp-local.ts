import {
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  closeSync,
  realpathSync,
  statSync,
  watch,
} from 'node:fs';
import path from 'node:path';
import { isMap, parseDocument, YAMLMap, type Document } from 'yaml';
import { NifflerError } from '../../main/errors.ts';
import { usageError } from '../../main/errors.ts';
import { loadForCommand, type GlobalOptions } from '../context.ts';
import { nifflerPaths, tildify } from '../../main/paths.ts';
import { print, printJson } from '../render/output.ts';
import { fsFailure, makeDirSync } from '../../workers/shared/fs-errors.ts';
import { writeAtomic } from '../../workers/shared/atomic.ts';

/**
 * Writes a config file whole or not at all (through a symlink to it, keeping its mode); a disk
 * fault names the file and the errno.
 */
const saveConfig = async (file: string, text: string): Promise<void> => {
  try {
    makeDirSync(path.dirname(file));
    const target = existsSync(file) ? realpathSync(file) : file;
    const mode = existsSync(target) ? statSync(target).mode & 0o777 : 0o644;
    await writeAtomic(target, text, mode);
  } catch (error) {
    throw new NifflerError(
      'internal',
      `${fsFailure('write the config', file, error)}; it is unchanged`,
      {},
      { cause: error },
    );
  }
};

/** `niffler mcp logs NAME [--follow] [--lines N]`: the server's stderr log, read from its file. */
export const mcpLogs = async (
  name: string,
  options: GlobalOptions & { follow?: boolean; lines?: string },
): Promise<void> => {
  const loaded = loadForCommand(options);
  if (!loaded.servers.some((s) => s.name === name))
    throw new NifflerError('mcp-not-found', `no server named "${name}"; see niffler mcp list`);
  const file = path.join(nifflerPaths(loaded.root).mcpLogsDir, `${name}.log`);
  const lines = Number.parseInt(options.lines ?? '200', 10);
  if (!existsSync(file)) {
    if (!options.follow) {
      print(
        `No log yet for "${name}" (${tildify(file)}): it has not been started. Start it: niffler mcp start ${name}`,
      );
      return;
    }
  } else {
    const text = readFileSync(file, 'utf8');
    const all = text.split('\n');
    if (all.at(-1) === '') all.pop();
    if (options.json) printJson({ file, lines: all.slice(-lines) });
    else if (all.length) print(all.slice(-lines).join('\n'));
  }
  if (!options.follow) return;
  await follow(file);
};

/** Prints what is appended to `file` until interrupted (Ctrl-C). Copes with rotation. */
const follow = (file: string): Promise<void> =>
  new Promise((resolve) => {
    let offset = existsSync(file) ? statSync(file).size : 0;
    const readMore = () => {
      if (!existsSync(file)) return;
      const size = statSync(file).size;
      if (size < offset) offset = 0; // rotated
      if (size === offset) return;
      const fd = openSync(file, 'r');
      const buffer = Buffer.alloc(size - offset);
      readSync(fd, buffer, 0, buffer.length, offset);
      closeSync(fd);
      offset = size;
      process.stdout.write(buffer);
    };
    mkdirSync(path.dirname(file), { recursive: true });
    const watcher = watch(path.dirname(file), (_event, changed) => {
      if (changed === null || changed.toString() === path.basename(file)) readMore();
    });
    process.once('SIGINT', () => {
      watcher.close();
      resolve();
    });
  });

type Scope = 'repo' | 'global';

const scopeFile = (options: GlobalOptions & { scope?: string }): { file: string; scope: Scope } => {
  const scope = (options.scope ?? 'repo') as Scope;
  if (scope !== 'repo' && scope !== 'global')
    throw usageError(`--scope must be repo or global, got "${options.scope}"`);
  const loaded = loadForCommand(options);
  const paths = nifflerPaths(loaded.root);
  return { file: scope === 'repo' ? paths.repoConfig : paths.globalConfig, scope };
};

const readDocument = (file: string) => {
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const doc: Document = parseDocument(text);
  if (doc.errors.length)
    throw new NifflerError(
      'config-invalid',
      `${tildify(file)}: ${doc.errors[0]!.message.split('\n')[0]}; fix it before editing with niffler mcp`,
    );
  if (!isMap(doc.contents)) doc.contents = new YAMLMap();
  return doc;
};

const parsePairs = (
  values: string[] | undefined,
  separator: string,
  flag: string,
): Record<string, string> | undefined => {
  if (!values?.length) return undefined;
  return Object.fromEntries(
    values.map((value) => {
      const at = value.indexOf(separator);
      if (at <= 0) throw usageError(`${flag} expects NAME${separator}VALUE, got "${value}"`);
      return [value.slice(0, at).trim(), value.slice(at + 1).trim()];
    }),
  );
};

interface AddOptions extends GlobalOptions {
  scope?: string;
  url?: string;
  transport?: string;
  header?: string[];
  env?: string[];
  workingDir?: string;
  disabled?: boolean;
}

/**
 * `niffler mcp add NAME -- COMMAND ARGS…` or `niffler mcp add NAME --url URL [--header K:V]…`:
 * adds a server to the repo (or global) YAML, keeping its comments and layout.
 */
export const mcpAdd = async (
  name: string,
  command: string[],
  options: AddOptions,
): Promise<void> => {
  if (!/^[A-Za-z0-9_.-]+$/.test(name))
    throw usageError(`server names use letters, digits, _ . and - only; got "${name}"`);
  if (command.length === 0 && !options.url)
    throw usageError(
      'give a command after -- (niffler mcp add NAME -- npx -y PACKAGE) or --url URL',
    );
  if (command.length > 0 && options.url)
    throw usageError('give either a command or --url, not both');
  const { file, scope } = scopeFile(options);
  const doc = readDocument(file);
  if (doc.hasIn(['mcpServers', name]))
    throw new NifflerError(
      'usage',
      `${tildify(file)} already has a server "${name}"; remove it first (niffler mcp remove ${name}${scope === 'global' ? ' --scope global' : ''})`,
    );
  const entry: Record<string, unknown> = {};
  if (command.length) {
    entry['command'] = command[0];
    if (command.length > 1) entry['args'] = command.slice(1);
  } else entry['url'] = options.url;
  if (options.transport) entry['transport'] = options.transport;
  const headers = parsePairs(options.header, ':', '--header');
  if (headers) entry['headers'] = headers;
  const env = parsePairs(options.env, '=', '--env');
  if (env) entry['env'] = env;
  if (options.workingDir) entry['workingDir'] = options.workingDir;
  if (options.disabled) entry['enabled'] = false;
  if (!doc.has('mcpServers') || !isMap(doc.get('mcpServers')))
    doc.set('mcpServers', doc.createNode({}));
  doc.setIn(['mcpServers', name], doc.createNode(entry));
  await saveConfig(file, doc.toString());
  if (options.json) {
    printJson({ added: name, file, entry });
    return;
  }
  print(`added "${name}" to ${tildify(file)}`);
  if (scope === 'repo')
    print(`Repository servers start once you trust this repository: niffler trust`);
};

/** `niffler mcp remove NAME [--scope repo|global]`: removes the entry, keeping the rest of the file. */
export const mcpRemove = async (
  name: string,
  options: GlobalOptions & { scope?: string },
): Promise<void> => {
  const { file, scope } = scopeFile(options);
  const doc = readDocument(file);
  if (!doc.hasIn(['mcpServers', name]))
    throw new NifflerError(
      'mcp-not-found',
      `${tildify(file)} has no server "${name}"${scope === 'repo' ? '; for a global one add --scope global' : ''}`,
    );
  doc.deleteIn(['mcpServers', name]);
  await saveConfig(file, doc.toString());
  if (options.json) printJson({ removed: name, file });
  else print(`removed "${name}" from ${tildify(file)}`);
};

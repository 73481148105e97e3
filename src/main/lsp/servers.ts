import { realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { LoadedConfig } from '../extensions/workspace-config.ts';
import { originsUnder } from '../config/merge.ts';
import { formatPlace } from '../config/source.ts';
import type { LspServerConfig } from '../config/schema.ts';
import { expandHome, hiddenFromSandbox, type Env } from '../paths.ts';
import type { LspServerSpec, LspServerState, LspSource } from '../../workers/protocol/lsp.ts';
import type { SandboxPolicy } from '../../workers/protocol/sandbox.ts';
import { isInside } from '../../workers/shared/confine.ts';
import { isExecutableFile } from '../../workers/shared/executable.ts';
import { isObject } from '../../workers/shared/is-object.ts';
import { BUILTIN_SERVERS, LSP_SETTINGS, type BuiltinServer } from '../config/lsp-builtins.ts';
import { repoBinary } from '../trust/repo-binaries.ts';

/**
 * A language server as the config and the machine make it: ready to run (`spec`), or why not
 * (`state` and `reason`: switched off, waiting for trust, not installed).
 */
export interface ResolvedLsp {
  name: string;
  source: LspSource;
  languages: Record<string, string>;
  /** What runs (or would): the command line, for `lsp status`. */
  command: string;
  spec?: LspServerSpec;
  state?: Extract<LspServerState, 'disabled' | 'untrusted' | 'missing'>;
  reason?: string;
}

/** Where a command's name leads: the repository's node_modules/.bin (trusted only), then PATH. */
const findCommand = (
  name: string,
  root: string,
  trusted: boolean,
  env: Env,
): string | undefined => {
  if (name.includes('/')) {
    const file = path.resolve(root, expandHome(name, env));
    return isExecutableFile(file) ? file : undefined;
  }
  if (trusted && isExecutableFile(repoBinary(root, name))) return repoBinary(root, name);
  for (const dir of (env['PATH'] ?? '').split(path.delimiter)) {
    if (!dir) continue;
    // A PATH entry inside the repository (./node_modules/.bin, say) is the repository's.
    const absolute = path.resolve(root, dir);
    if (!trusted && isInside(absolute, root)) continue;
    const file = path.join(absolute, name);
    if (isExecutableFile(file)) return file;
  }
  return undefined;
};

const realOf = (file: string): string => {
  try {
    return realpathSync(file);
  } catch {
    return file;
  }
};

/**
 * The TypeScript that typescript-language-server at `command` would load when told none: the one
 * installed beside it (Node's resolution from its own files), else the workspace's. Niffler always
 * names one, so that an untrusted repository's node_modules/typescript never runs.
 */
const typescriptBeside = (command: string): string | undefined => {
  try {
    return createRequire(realOf(command)).resolve('typescript/lib/tsserver.js');
  } catch {
    return undefined;
  }
};

/** Which layers an entry's values came from. */
const sourceOf = (loaded: LoadedConfig, name: string, entry: unknown): LspSource => {
  if (!entry) return 'builtin';
  const kinds = originsUnder(loaded.origins, ['lsp', name]).map((o) => o.kind);
  return kinds.some((k) => k === 'repo' || k === 'mcp-json') ? 'repository' : 'yours';
};

/** Where an entry of the repository is written, for the reason it waits for trust. */
const placeOf = (loaded: LoadedConfig, name: string, env: Env): string => {
  const origin = originsUnder(loaded.origins, ['lsp', name]).find((o) => o.kind === 'repo');
  return origin?.file ? formatPlace(origin.file, origin.line, ['lsp', name], env) : `lsp.${name}`;
};

/** The languages of an entry: its `extensions` (a built-in's language ids kept), else the built-in's. */
const languagesOf = (entry: LspServerConfig | undefined, builtin: BuiltinServer | undefined) =>
  entry?.extensions
    ? Object.fromEntries(
        entry.extensions.map((ext) => [ext, builtin?.languages[ext] ?? ext.slice(1)]),
      )
    : { ...(builtin?.languages ?? {}) };

/** A stdio server's sandbox, as `mcpServers.X.sandbox` is made: write paths absolute, secrets hidden. */
const sandboxOf = (
  asked: LspServerConfig['sandbox'],
  root: string,
  home: string,
  env: Env,
): SandboxPolicy | undefined => {
  if (!asked) return undefined;
  const { write, network } = asked === true ? { write: [], network: false } : asked;
  return {
    write: write.map((entry) => path.resolve(root, expandHome(entry, env))),
    read: [root],
    network,
    hide: [...new Set([home, ...hiddenFromSandbox(env)])],
  };
};

interface Context {
  loaded: LoadedConfig;
  env: Env;
  home: string;
  trusted: boolean;
}

/** One server, from its built-in definition and its entry. */
/** The commands that may run a server, in order: the configured one, or the built-in's. */
const candidatesOf = (
  entry: LspServerConfig | undefined,
  builtin: BuiltinServer | undefined,
): { command: string; args: string[] }[] =>
  entry?.command
    ? [
        {
          command: entry.command,
          args:
            entry.args ??
            builtin?.commands.find((c) => c.command === path.basename(entry.command!))?.args ??
            [],
        },
      ]
    : (builtin?.commands ?? []).map((c) => ({ ...c, args: entry?.args ?? c.args }));

const resolveOne = (name: string, ctx: Context): ResolvedLsp => {
  const { loaded, env, trusted } = ctx;
  const root = loaded.root;
  const entry = loaded.config.lsp[name];
  const builtin = BUILTIN_SERVERS[name];
  const source = sourceOf(loaded, name, entry);
  const languages = languagesOf(entry, builtin);
  const candidates = candidatesOf(entry, builtin);
  const shownCommand = candidates.map((c) => [c.command, ...c.args].join(' ')).join(' | ');
  const base = { name, source, languages, command: shownCommand };
  if (!loaded.config.lsp.enabled)
    return { ...base, state: 'disabled', reason: 'lsp.enabled is false' };
  if (entry?.enabled === false)
    return { ...base, state: 'disabled', reason: `lsp.${name}.enabled is false` };
  if (source === 'repository' && !trusted)
    return {
      ...base,
      state: 'untrusted',
      reason: `${placeOf(loaded, name, env)} comes from this repository, which is not trusted: review it with niffler trust --diff, then run niffler trust`,
    };
  if (builtin?.runsProjectCode && !trusted)
    return {
      ...base,
      state: 'untrusted',
      reason: `${name}'s server runs ${builtin.runsProjectCode}: it starts once you trust this repository (niffler trust)`,
    };
  for (const candidate of candidates) {
    const found = findCommand(candidate.command, root, trusted, env);
    if (!found) continue;
    if (!trusted && isInside(realOf(found), root))
      return {
        ...base,
        command: found,
        state: 'untrusted',
        reason: `${path.relative(root, found)} is inside this repository, which is not trusted: niffler trust`,
      };
    return finish(
      name,
      { ...base, command: [found, ...candidate.args].join(' ') },
      found,
      candidate.args,
      entry,
      ctx,
    );
  }
  return {
    ...base,
    state: 'missing',
    reason: `${candidates.map((c) => c.command).join(' or ') || 'no command'} not found on PATH${trusted ? ' nor in node_modules/.bin' : ''}${builtin ? `; install it: ${builtin.install}` : ''}`,
  };
};

/** `over` on `under`, objects merged one level deep (`tsserver: {path}` keeps `useSyntaxServer`). */
const mergeOptions = (
  under: Record<string, unknown> | undefined,
  over: Record<string, unknown> | undefined,
): Record<string, unknown> | undefined => {
  if (!under || !over) return over ?? (under ? structuredClone(under) : undefined);
  const merged: Record<string, unknown> = { ...structuredClone(under) };
  for (const [key, value] of Object.entries(over)) {
    const below = merged[key];
    merged[key] = isObject(below) && isObject(value) ? { ...below, ...value } : value;
  }
  return merged;
};

/** The spec of a server that can run, with TypeScript pinned where it is the built-in. */
const finish = (
  name: string,
  base: ResolvedLsp,
  command: string,
  args: string[],
  entry: LspServerConfig | undefined,
  ctx: Context,
): ResolvedLsp => {
  const root = ctx.loaded.root;
  const builtin = BUILTIN_SERVERS[name];
  const own = builtin?.commands.some((c) => c.command === path.basename(command));
  let options = mergeOptions(
    own ? builtin?.initializationOptions : undefined,
    entry?.initializationOptions,
  );
  if (path.basename(command) === 'typescript-language-server') {
    const given = (options?.['tsserver'] as { path?: unknown } | undefined)?.path;
    const beside = typeof given === 'string' ? undefined : typescriptBeside(command);
    if (beside && (ctx.trusted || !isInside(realOf(beside), root)))
      options = { ...options, tsserver: { ...(options?.['tsserver'] as object), path: beside } };
    else if (!beside && typeof given !== 'string' && !ctx.trusted)
      return {
        ...base,
        state: 'untrusted',
        reason: `no TypeScript is installed beside ${command}, so it would run this repository's (node_modules/typescript): install typescript beside it (npm install -g typescript), or trust the repository (niffler trust)`,
      };
  }
  const sandbox = sandboxOf(entry?.sandbox, root, ctx.home, ctx.env);
  return {
    ...base,
    spec: {
      name,
      command,
      args,
      languages: base.languages,
      ...(options ? { initializationOptions: options } : {}),
      ...(entry?.env ? { env: { ...entry.env } } : {}),
      ...(sandbox ? { sandbox } : {}),
      source: base.source,
    },
  };
};

/**
 * Every language server the workspace knows — the built-ins and each `lsp.<name>` entry — with
 * what runs it, or why it cannot run. A repository's entries, its own programs
 * (node_modules/.bin) and servers that run the project's code wait for trust; the user's servers
 * on PATH run as the user's.
 */
export const resolveLspServers = (loaded: LoadedConfig, env: Env, home: string): ResolvedLsp[] => {
  const names = [
    ...new Set([
      ...Object.keys(BUILTIN_SERVERS),
      ...Object.keys(loaded.config.lsp).filter(
        (k) => !(LSP_SETTINGS as readonly string[]).includes(k),
      ),
    ]),
  ];
  const ctx: Context = { loaded, env, home, trusted: loaded.trust.level === 'trusted' };
  return names.map((name) => resolveOne(name, ctx));
};

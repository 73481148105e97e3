import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { NifflerError } from '../errors.ts';
import { tildify, type Env } from '../paths.ts';

/** What a user trusted for one workspace: a digest per server definition, one for other settings. */
export interface TrustRecord {
  trustedAt: string;
  servers: Record<string, string>;
  settings: string;
}

export interface TrustFile {
  version: 1;
  workspaces: Record<string, TrustRecord>;
}

/** The parts of a repo's config that start processes, open connections or widen permissions. */
export interface GatedParts {
  servers: Record<string, unknown>;
  settings: unknown;
}

const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, item: unknown) =>
    item && typeof item === 'object' && !Array.isArray(item)
      ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => a.localeCompare(b)))
      : item,
  );

/** SHA-256 of a value's canonical JSON (keys sorted). */
export const digest = (value: unknown): string =>
  createHash('sha256')
    .update(canonical(value ?? null))
    .digest('hex');

/** The fields of a server definition whose change asks for trust again. */
export const serverDigest = (server: unknown): string => {
  const entry = (server ?? {}) as Record<string, unknown>;
  const { command, args, url, transport, workingDir, env, headers } = entry;
  return digest({ command, args, url, transport, workingDir, env, headers });
};

export const readTrust = (file: string, env?: Env): TrustFile => {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, workspaces: {} };
    throw error;
  }
  try {
    const parsed = JSON.parse(text) as TrustFile;
    if (parsed.version === 1 && parsed.workspaces && typeof parsed.workspaces === 'object')
      return parsed;
  } catch {
    // fall through to the error below
  }
  throw new NifflerError(
    'config-invalid',
    `${tildify(file, env)}: not a valid trust file; delete it and run niffler trust again`,
    { file },
  );
};

const writeTrust = (file: string, trust: TrustFile): void => {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, JSON.stringify(trust, null, 2) + '\n', { mode: 0o600 });
  renameSync(temp, file);
};

/** Records that the user trusts `root` as its config stands now (`parts` unexpanded). */
export const trustWorkspace = (file: string, root: string, parts: GatedParts): TrustRecord => {
  const trust = readTrust(file);
  const record: TrustRecord = {
    trustedAt: new Date().toISOString(),
    servers: Object.fromEntries(
      Object.entries(parts.servers).map(([name, server]) => [name, serverDigest(server)]),
    ),
    settings: digest(parts.settings),
  };
  trust.workspaces[root] = record;
  writeTrust(file, trust);
  return record;
};

/** Forgets the trust given to `root`. Returns false when there was none. */
export const revokeWorkspace = (file: string, root: string): boolean => {
  const trust = readTrust(file);
  if (!trust.workspaces[root]) return false;
  delete trust.workspaces[root];
  writeTrust(file, trust);
  return true;
};

export interface TrustState {
  /** Repo settings (models, loosened tool policies, allowed paths) may be used. */
  settingsTrusted: boolean;
  /** Per repo server: trusted, or why not. */
  servers: Record<string, 'trusted' | 'untrusted' | 'changed'>;
  record?: TrustRecord;
}

/** Compares a repo's gated parts with what was trusted. */
export const checkTrust = (record: TrustRecord | undefined, parts: GatedParts): TrustState => {
  const servers: TrustState['servers'] = {};
  for (const [name, server] of Object.entries(parts.servers)) {
    const known = record?.servers[name];
    servers[name] =
      known === undefined ? 'untrusted' : known === serverDigest(server) ? 'trusted' : 'changed';
  }
  const settingsTrusted =
    parts.settings === undefined || record?.settings === digest(parts.settings);
  return { settingsTrusted, servers, ...(record ? { record } : {}) };
};

import { redact } from '../config/redact.ts';
import { formatPlace } from '../config/source.ts';
import type { Env } from '../paths.ts';
import { digestOf, type Contribution } from './contribution.ts';
import type { Part } from './part.ts';
import { updateTrustStore, type StoreState, type TrustRecord } from './store.ts';

/**
 * Whether a repository's contribution may be used: `trusted` (the user trusted exactly what it
 * holds now), `untrusted` (never trusted, or the store cannot be relied on) or `changed`
 * (trusted once; something that needs trust changed since).
 */
export type RepoTrust = 'trusted' | 'untrusted' | 'changed';

/** How one part differs from what the user trusted. */
export interface Change {
  key: string;
  change: 'added' | 'removed' | 'changed';
  /** How it was shown when trusted (removed, changed). */
  was?: string;
  /** How it is now (added, changed), with its file:line. */
  now?: string;
  place?: string;
}

/** The one answer every part of niffler consults: may this repository's contribution be used? */
export interface TrustDecision {
  level: RepoTrust;
  contribution: Contribution;
  /** What differs from the trusted record (every part, as `added`, when never trusted). */
  changes: Change[];
  /** Why the decision could not consult the store (broken, a symlink…), if so. */
  problem?: string;
  /** Trusted by an older niffler, whose record covered less: must be trusted again. */
  legacy?: boolean;
}

/** A part as the user is shown it: one line, secrets redacted. */
export const showPart = (part: Pick<Part, 'value'>): string => {
  const shown = JSON.stringify(redact(part.value));
  return shown.length > 300 ? `${shown.slice(0, 297)}...` : shown;
};

const placeOf = (part: Part, env?: Env): string =>
  formatPlace(part.file, part.line, part.path, env);

/** What differs between the parts now and a trusted record (all added without one). */
const diffParts = (parts: readonly Part[], record?: TrustRecord, env?: Env): Change[] => {
  const trusted = record?.parts ?? {};
  const changes: Change[] = [];
  for (const part of parts) {
    const was = trusted[part.key];
    if (was && was.digest === digestOf(part.value)) continue;
    changes.push({
      key: part.key,
      change: was ? 'changed' : 'added',
      ...(was ? { was: was.shown } : {}),
      now: showPart(part),
      place: placeOf(part, env),
    });
  }
  const now = new Set(parts.map((p) => p.key));
  for (const [key, was] of Object.entries(trusted))
    if (!now.has(key)) changes.push({ key, change: 'removed', was: was.shown });
  return changes;
};

/** Decides trust for `root` from the store as read and what the repository contributes now. */
export const decideTrust = (
  state: StoreState,
  root: string,
  contribution: Contribution,
  env?: Env,
): TrustDecision => {
  if (!state.ok)
    return {
      level: 'untrusted',
      contribution,
      changes: diffParts(contribution.parts, undefined, env),
      problem: state.problem,
    };
  const record = state.store.workspaces[root];
  if (!record) {
    const legacy = state.legacy.has(root);
    return {
      level: legacy ? 'changed' : 'untrusted',
      contribution,
      changes: diffParts(contribution.parts, undefined, env),
      ...(legacy ? { legacy } : {}),
    };
  }
  const changes = diffParts(contribution.parts, record, env);
  return {
    level: record.digest === contribution.digest ? 'trusted' : 'changed',
    contribution,
    changes: record.digest === contribution.digest ? [] : changes,
  };
};

/** The record `niffler trust` writes: the whole digest, and each part as the user saw it. */
const recordOf = (contribution: Contribution, now = new Date()): TrustRecord => ({
  trustedAt: now.toISOString(),
  digest: contribution.digest,
  parts: Object.fromEntries(
    contribution.parts.map((p) => [p.key, { digest: digestOf(p.value), shown: showPart(p) }]),
  ),
});

/** One line for the user: what is not used, why, and how to see and accept it. */
export const untrustedSummary = (decision: TrustDecision): string | undefined => {
  if (decision.level === 'trusted') return undefined;
  if (decision.problem) return decision.problem;
  const names = (kind: Part['kind']) =>
    decision.contribution.parts
      .filter((p) => p.kind === kind)
      .map((p) =>
        kind !== 'server'
          ? p.path.join('.')
          : p.path[0] === 'lsp'
            ? `language server ${p.path[1]!}`
            : p.path[1]!,
      );
  const servers = names('server');
  const settings = names('setting');
  const extensions = names('extension');
  const scripts = names('script').map((p) => p.replace(/^files\./, ''));
  const what = [
    servers.length ? `its servers ${servers.join(', ')} are not started` : '',
    settings.length ? `its settings ${settings.join(', ')} are ignored` : '',
    extensions.length ? `its ${extensions.join(', ')} are ignored` : '',
    scripts.length ? `the scripts they run (${scripts.join(', ')}) are not run` : '',
  ]
    .filter(Boolean)
    .join(' and ');
  if (!what) return undefined;
  const why =
    decision.level === 'changed'
      ? decision.legacy
        ? 'this repository was trusted by an older niffler, whose trust covered less'
        : `this repository's config changed since you trusted it (${decision.changes.map((c) => `${c.key.replace(/^[^:]+:/, '')} ${c.change}`).join(', ')})`
      : 'this repository is not trusted';
  return `${why}: ${what}; review with niffler trust --diff, then run niffler trust`;
};

/** Records that the user trusts `root` for exactly what it contributes now. */
export const trustRepository = (
  file: string,
  root: string,
  contribution: Contribution,
  env?: Env,
): TrustRecord => {
  const record = recordOf(contribution);
  updateTrustStore(file, (store) => void (store.workspaces[root] = record), env);
  return record;
};

/** Forgets the trust given to `root`; false when there was none. */
export const revokeRepository = (file: string, root: string, env?: Env): boolean => {
  let had = false;
  updateTrustStore(
    file,
    (store) => {
      had = root in store.workspaces;
      delete store.workspaces[root];
    },
    env,
  );
  return had;
};

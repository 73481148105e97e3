import { z } from 'zod';
import { readStateFile, withStateLock, writeStateFile } from '../../workers/shared/state-file.ts';
import { NifflerError } from '../errors.ts';
import { tildify, type Env } from '../paths.ts';
import { PARSE_ONCE } from '../config/schema.ts';

/** What the user saw of one part when they trusted it: its digest and how it was shown. */
const TrustedPartSchema = z.strictObject({ digest: z.string(), shown: z.string() });

const TrustRecordSchema = z.strictObject({
  trustedAt: z.string(),
  /** The digest of the whole contribution (see `repositoryContribution`). */
  digest: z.string(),
  parts: z.record(z.string(), TrustedPartSchema),
});

/** A record written by niffler 0.1 (digests of server commands and of some settings only). */
const LegacyRecordSchema = z.object({
  trustedAt: z.string(),
  servers: z.record(z.string(), z.string()),
});

const StoreSchema = z.strictObject({
  version: z.literal(2),
  workspaces: z.record(z.string(), TrustRecordSchema),
});

const LegacyStoreSchema = z.object({
  version: z.literal(1),
  workspaces: z.record(z.string(), LegacyRecordSchema),
});

export type TrustRecord = z.infer<typeof TrustRecordSchema>;
type TrustStore = z.infer<typeof StoreSchema>;

/**
 * The trust store as read: usable (with the roots trusted by an older niffler, which must be
 * trusted again), or broken — then nothing is trusted until the user resets it.
 */
export type StoreState =
  { ok: true; store: TrustStore; legacy: ReadonlySet<string> } | { ok: false; problem: string };

const empty = (): TrustStore => ({ version: 2, workspaces: {} });

/** Reads the trust store at `file`; never throws (a broken store is a `problem`). */
export const readTrustStore = (file: string, env?: Env): StoreState => {
  const read = readStateFile(file);
  if (read.kind === 'missing') return { ok: true, store: empty(), legacy: new Set() };
  const reset = `trust nothing until it is reset: rm ${tildify(file, env)}, then niffler trust in each repository you trust`;
  if (read.kind === 'refused')
    return { ok: false, problem: `${tildify(file, env)}: ${read.why}; niffler will ${reset}` };
  let json: unknown;
  try {
    json = JSON.parse(read.text);
  } catch {
    return { ok: false, problem: `${tildify(file, env)}: not valid JSON; niffler will ${reset}` };
  }
  const current = StoreSchema.safeParse(json, PARSE_ONCE);
  if (current.success) return { ok: true, store: current.data, legacy: new Set() };
  const legacy = LegacyStoreSchema.safeParse(json, PARSE_ONCE);
  if (legacy.success)
    return { ok: true, store: empty(), legacy: new Set(Object.keys(legacy.data.workspaces)) };
  return {
    ok: false,
    problem: `${tildify(file, env)}: not a trust store niffler knows; niffler will ${reset}`,
  };
};

/**
 * Changes the trust store under its lock: read, `change`, write whole. A broken store is never
 * overwritten: the error says how to reset it.
 */
export const updateTrustStore = (
  file: string,
  change: (store: TrustStore) => void,
  env?: Env,
): void =>
  withStateLock(file, () => {
    const state = readTrustStore(file, env);
    if (!state.ok) throw new NifflerError('config-invalid', state.problem, { file });
    change(state.store);
    writeStateFile(file, `${JSON.stringify(state.store, null, 2)}\n`);
  });

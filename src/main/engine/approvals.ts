import { z } from 'zod';
import { readStateFile, withStateLock, writeStateFile } from '../../workers/shared/state-file.ts';
import { tildify } from '../paths.ts';
import type { Remembered } from '../trust/approval.ts';

const StoreSchema = z.object({
  version: z.literal(1),
  workspaces: z.record(z.string(), z.record(z.string(), z.enum(['allow', 'deny']))),
});
type StoreFile = z.infer<typeof StoreSchema>;

/** Where an answer is remembered: this session (memory) or this repository (`approvals.json`). */
type RememberScope = 'session' | 'repo';

/**
 * Remembered answers: per session in memory, per repository in `file` (under `$NIFFLER_HOME`,
 * mode 0600, keyed by workspace root; never inside the repository). The file is read only as a
 * private regular file (never through a symlink); one that is missing counts as empty, one that
 * cannot be relied on too — nothing is remembered from it (`problem` says why) — and it is
 * replaced whole on the next save, under a lock so two front-ends lose nothing.
 */
export class ApprovalStore {
  readonly #file: string;
  readonly #root: string;
  readonly #sessions = new Map<string, Record<string, 'allow' | 'deny'>>();
  #repo: Record<string, 'allow' | 'deny'> = {};
  /** Why the file was not used, if it was not. */
  problem: string | undefined;

  constructor(file: string, root: string) {
    this.#file = file;
    this.#root = root;
  }

  /** Reads the repository's saved answers; call once before `settingsFor`. */
  async load(): Promise<void> {
    this.#repo = { ...(this.#read().workspaces[this.#root] ?? {}) };
  }

  /** The remembered answers to put into `ApprovalSettings` for a session. */
  remembered(sessionId: string): { session: Remembered; repo: Remembered } {
    return { session: { ...this.#sessions.get(sessionId) }, repo: { ...this.#repo } };
  }

  /** Remembers `answer` for `pattern` (a tool name or glob) in the session or the repository. */
  async remember(
    scope: RememberScope,
    sessionId: string,
    pattern: string,
    answer: 'allow' | 'deny',
  ): Promise<void> {
    if (scope === 'session') {
      this.#sessions.set(sessionId, { ...this.#sessions.get(sessionId), [pattern]: answer });
      return;
    }
    this.#repo = { ...this.#repo, [pattern]: answer };
    this.#update((store) => void (store.workspaces[this.#root] = this.#repo));
  }

  /** Forgets every answer saved for this repository. */
  async forgetRepo(): Promise<void> {
    this.#repo = {};
    this.#update((store) => void delete store.workspaces[this.#root]);
  }

  #read(): StoreFile {
    const read = readStateFile(this.#file);
    this.problem = undefined;
    if (read.kind === 'text') {
      try {
        const parsed = StoreSchema.safeParse(JSON.parse(read.text));
        if (parsed.success) return parsed.data;
      } catch {
        // Reported below.
      }
    }
    if (read.kind !== 'missing')
      this.problem = `${tildify(this.#file)}: ${read.kind === 'refused' ? read.why : 'not a valid approvals file'}; no remembered answer is used from it (the next "always" answer replaces it)`;
    return { version: 1, workspaces: {} };
  }

  #update(change: (store: StoreFile) => void): void {
    withStateLock(this.#file, () => {
      const store = this.#read();
      change(store);
      writeStateFile(this.#file, `${JSON.stringify(store, null, 2)}\n`);
    });
  }
}

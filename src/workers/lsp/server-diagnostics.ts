import {
  DocumentDiagnosticRequest,
  ExecuteCommandRequest,
  type CancellationToken,
  type Diagnostic,
  type InitializeResult,
  type ProtocolConnection,
  type PublishDiagnosticsParams,
} from 'vscode-languageserver-protocol/node';
import {
  byPosition,
  fromTsserver,
  MAX_FILE_DIAGNOSTICS,
  type TsserverDiagnostic,
} from './diagnostics.ts';
import type { OpenDocument } from './documents.ts';
import { shown, type Place } from './files.ts';

// A server's diagnostics: asked for (LSP's pull, or tsserver's own request) or, from a server that
// only pushes, waited for; what it pushed of files kept for the workspace's diagnostics.

/** Pushed diagnostics kept of files that are not open (for a workspace's diagnostics). */
const MAX_PUSHED_FILES = 500;
/** After a pushed answer, how long more of the same file's are waited for (servers send in parts). */
const PUSH_QUIET_MS = 100;
const TSSERVER_REQUEST = 'typescript.tsserverRequest';

/** How a server's diagnostics are read: LSP's pull, tsserver's own request, or its pushes. */
export type DiagnosticsMode = 'pull' | 'tsserver' | 'push';

/** How diagnostics are read, from what the server said it can do. */
export const modeOf = (init: InitializeResult): DiagnosticsMode => {
  if (init.capabilities.diagnosticProvider) return 'pull';
  const commands = init.capabilities.executeCommandProvider?.commands ?? [];
  return commands.includes(TSSERVER_REQUEST) ? 'tsserver' : 'push';
};

/** What a server pushed for one file: when, for which version, what. */
interface Pushed {
  at: number;
  version?: number;
  items: Diagnostic[];
}

/** What the diagnostics need of their server. */
interface DiagnosticsHost {
  readonly place: Place;
  /** How it reads them (undefined while it does not run). */
  mode(): DiagnosticsMode | undefined;
  /** A question bounded by `deadline` (`LanguageServer.ask`). */
  ask<R>(
    send: (conn: ProtocolConnection, token: CancellationToken) => Promise<R>,
    deadline: number,
    what: string,
  ): Promise<R | undefined>;
  /** Called when a wait for pushed diagnostics since `since` ended with none. */
  nothingPushed(since: number): void;
}

export class ServerDiagnostics {
  readonly #pushWaiters = new Set<(file: string) => void>();
  readonly #pushed = new Map<string, Pushed>();
  /** When diagnostics last came (pushed, or answered). */
  lastAt: number | null = null;

  constructor(private readonly host: DiagnosticsHost) {}

  /** The server pushed `params` of workspace file `file`. */
  pushedNow(file: string, params: PublishDiagnosticsParams): void {
    const items = params.diagnostics.slice(0, MAX_FILE_DIAGNOSTICS);
    const pushed: Pushed = {
      at: Date.now(),
      items,
      ...(params.version !== undefined && params.version !== null
        ? { version: params.version }
        : {}),
    };
    this.#pushed.delete(file);
    this.#pushed.set(file, pushed);
    if (this.#pushed.size > MAX_PUSHED_FILES)
      this.#pushed.delete(this.#pushed.keys().next().value!);
    this.lastAt = pushed.at;
    for (const wake of [...this.#pushWaiters]) wake(file);
  }

  /** The diagnostics of the workspace's files it has said something of (pushed), by file. */
  pushedFiles(): Map<string, Diagnostic[]> {
    return new Map([...this.#pushed].map(([file, p]) => [file, p.items]));
  }

  /** Forgets what was pushed (the server ended). */
  clear(): void {
    this.#pushed.clear();
  }

  /**
   * What `doc` had before a change: asked for (pull), or what a pushing server said of this very
   * version already (waiting would take the change's answer for it).
   */
  baseline(doc: OpenDocument, deadline: number): Promise<Diagnostic[] | undefined> {
    if (this.host.mode() !== 'push') return this.of(doc, deadline);
    if (doc.diagnostics?.version === doc.version) return Promise.resolve(doc.diagnostics.items);
    const pushed = this.#pushed.get(doc.file);
    const current =
      pushed && pushed.at >= doc.syncedAt && (pushed.version ?? doc.version) === doc.version;
    return Promise.resolve(current ? pushed.items : undefined);
  }

  /** The diagnostics of `doc` as it now stands, asked for or waited for until `deadline`. */
  async of(doc: OpenDocument, deadline: number): Promise<Diagnostic[] | undefined> {
    const version = doc.version;
    if (doc.diagnostics?.version === version) return doc.diagnostics.items;
    const since = Date.now();
    const items =
      this.host.mode() === 'push'
        ? await this.#waitPush(doc, since, deadline)
        : await this.host.ask(
            (conn, token) => this.#pull(conn, doc, token),
            deadline,
            `a change to ${shown(doc.file, this.host.place)}`,
          );
    if (!items) return undefined;
    const sorted = items.slice(0, MAX_FILE_DIAGNOSTICS).sort(byPosition);
    if (doc.version === version) doc.diagnostics = { version, items: sorted, at: Date.now() };
    this.lastAt = Date.now();
    return sorted;
  }

  async #pull(
    conn: ProtocolConnection,
    doc: OpenDocument,
    token: CancellationToken,
  ): Promise<Diagnostic[]> {
    if (this.host.mode() === 'pull') {
      const report = await conn.sendRequest(
        DocumentDiagnosticRequest.type,
        { textDocument: { uri: doc.uri } },
        token,
      );
      return report.kind === 'full' ? report.items : (doc.diagnostics?.items ?? []);
    }
    const ask = async (command: string) => {
      const reply = (await conn.sendRequest(
        ExecuteCommandRequest.type,
        { command: TSSERVER_REQUEST, arguments: [command, { file: doc.uri }] },
        token,
      )) as { body?: TsserverDiagnostic[] } | null;
      return (reply?.body ?? []).map(fromTsserver);
    };
    const [syntax, semantic] = await Promise.all([
      ask('syntacticDiagnosticsSync'),
      ask('semanticDiagnosticsSync'),
    ]);
    return [...syntax, ...semantic];
  }

  /**
   * A pushing server's next diagnostics of `doc` after `since` (of its version, when it says
   * versions), and whatever more it sends of the same file right after.
   */
  #waitPush(doc: OpenDocument, since: number, deadline: number): Promise<Diagnostic[] | undefined> {
    const fresh = () => {
      const pushed = this.#pushed.get(doc.file);
      if (!pushed || pushed.at < since) return undefined;
      return pushed.version === undefined || pushed.version >= doc.version ? pushed : undefined;
    };
    return new Promise((resolve) => {
      let quiet: NodeJS.Timeout | undefined;
      const finish = (items: Diagnostic[] | undefined) => {
        clearTimeout(quiet);
        clearTimeout(timer);
        this.#pushWaiters.delete(onPush);
        if (!items) this.host.nothingPushed(since);
        resolve(items);
      };
      const onPush = (file: string) => {
        if (file !== doc.file || !fresh()) return;
        clearTimeout(quiet);
        quiet = setTimeout(
          () => finish(fresh()?.items),
          Math.min(PUSH_QUIET_MS, Math.max(0, deadline - Date.now())),
        );
      };
      const timer = setTimeout(() => finish(fresh()?.items), Math.max(0, deadline - Date.now()));
      this.#pushWaiters.add(onPush);
      onPush(doc.file);
    });
  }
}

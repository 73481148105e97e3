import path from 'node:path';
import type { LoadedConfig } from '../extensions/workspace-config.ts';
import type { ToolEntry } from '../calls/types.ts';
import type { Logger } from '../log.ts';
import type { Env, NifflerPaths } from '../paths.ts';
import type { LspStatusResult } from '../protocol.ts';
import { LspHost } from '../threads/lsp.ts';
import type { LspServerStatus, LspWorkerData } from '../../workers/protocol/lsp.ts';
import { findLanguageFiles } from './detect.ts';
import { editDiagnostics, type ChangedFiles, type EditDiagnostics } from './loop.ts';
import { resolveLspServers, type ResolvedLsp } from './servers.ts';
import { lspToolEntry } from './tool.ts';

interface LspServiceDeps {
  root: string;
  /**
   * Whether this engine is a daemon: only a daemon runs language servers (an in-process engine
   * serves one command, which a cold server would not be ready for).
   */
  daemon: boolean;
  paths: NifflerPaths;
  env: Env;
  log: Logger;
  loaded: () => LoadedConfig | null;
  configError: () => string | null;
  snapshots: () => ChangedFiles;
}

/** What a session asks of the language servers (see `SessionDeps.lsp`). */
export interface SessionLsp {
  /** The `lsp` tool, while a server runs and neither the session nor the config switched it off. */
  tools(disabled: ReadonlySet<string>): [string, ToolEntry][];
  /** What one step's calls go through; `snapshot` is the turn's first undo snapshot. */
  calls(snapshot: () => string | undefined): EditDiagnostics;
}

const RUNNING: ReadonlySet<LspServerStatus['state']> = new Set(['starting', 'ready', 'degraded']);

/**
 * The engine's side of the language servers: which ones the config and the machine allow
 * (`servers.ts`), starting them in the background when a session opens in a workspace with files
 * of their language, the LSP worker (`threads/lsp.ts`, made only then), `lsp/status`, and what a
 * session's turns get: the `lsp` tool and diagnostics after edits.
 */
export class LspService implements SessionLsp {
  #resolved: { loaded: LoadedConfig; servers: ResolvedLsp[] } | undefined;
  #host: LspHost | undefined;
  #starting: Promise<LspHost> | undefined;
  /** What the last look at the workspace found: a file of each ending, by ending. */
  #found: Map<string, string> | undefined;
  #warmed = false;
  #closed = false;
  readonly #lastTree = new Map<string, string>();

  constructor(private readonly deps: LspServiceDeps) {}

  /** The servers as the current config resolves them (worked out once per config). */
  #servers(): ResolvedLsp[] {
    const loaded = this.deps.loaded();
    if (!loaded) return [];
    if (this.#resolved?.loaded !== loaded)
      this.#resolved = {
        loaded,
        servers: resolveLspServers(loaded, this.deps.env, this.deps.paths.home),
      };
    return this.#resolved.servers;
  }

  /**
   * Starts, in the background, the servers that can run and have files of their language here
   * (a session opened). Cheap when called again.
   */
  warm(): void {
    if (!this.deps.daemon) return;
    this.#warmed = true;
    void this.#warm().catch((error: unknown) =>
      this.deps.log.warn('language servers did not start', { error: String(error) }),
    );
  }

  async #warm(): Promise<void> {
    const runnable = this.#servers().filter((s) => s.spec);
    if (this.#closed || !runnable.length) return;
    const endings = new Set(runnable.flatMap((s) => Object.keys(s.languages)));
    this.#found = await findLanguageFiles(this.deps.root, endings);
    const start = runnable.flatMap((server) => {
      const warmFile = Object.keys(server.languages)
        .map((ending) => this.#found!.get(ending))
        .find(Boolean);
      return warmFile ? [{ name: server.name, warmFile }] : [];
    });
    if (!start.length || this.#closed) return;
    const host = await this.#hostNow();
    await host.start(start);
  }

  #workerData(): LspWorkerData {
    const { paths } = this.deps;
    return {
      root: this.deps.root,
      servers: this.#servers().flatMap((s) => (s.spec ? [s.spec] : [])),
      excluded: [paths.home],
      logsDir: path.join(paths.logsDir, 'lsp', paths.key),
      serversDir: paths.serversDir,
    };
  }

  #hostNow(): Promise<LspHost> {
    this.#starting ??= LspHost.start(this.#workerData(), {
      logger: this.deps.log.child({ scope: 'lsp' }),
    }).then((host) => {
      this.#host = host;
      if (this.#closed) void host.close();
      return host;
    });
    return this.#starting;
  }

  /** Starts the server of `file`'s language with it as its warm-up file (a first file of it). */
  #wake(file: string): void {
    const server = this.#servers().find((s) => s.spec && path.extname(file) in s.languages);
    if (!server || this.#closed || !this.deps.daemon || !this.deps.loaded()?.config.lsp.enabled)
      return;
    void this.#hostNow()
      .then((host) => host.start([{ name: server.name, warmFile: file }]))
      .catch((error: unknown) =>
        this.deps.log.warn('language server did not start', { error: String(error) }),
      );
  }

  /** The host while a server runs (starting, ready or degraded); none otherwise. */
  #running(): LspHost | undefined {
    const host = this.#host;
    return host?.knownStatuses().some((s) => RUNNING.has(s.state)) ? host : undefined;
  }

  /** Whether a configured (runnable) server serves `file`. */
  #serves(file: string): boolean {
    const ending = path.extname(file);
    return this.#servers().some((s) => s.spec && ending in s.languages);
  }

  /** Every server the workspace knows, as `niffler lsp status` shows it. */
  async status(): Promise<LspStatusResult> {
    const live = new Map(
      (
        (await this.#host?.status().catch(() => undefined)) ??
        this.#host?.knownStatuses() ??
        []
      ).map((s) => [s.name, s]),
    );
    const config = this.deps.loaded()?.config.lsp;
    return {
      enabled: config?.enabled ?? true,
      diagnosticsWait: config?.diagnosticsWait ?? 3,
      servers: this.#servers().map((server) => live.get(server.name) ?? this.#idleStatus(server)),
      configError: this.deps.configError(),
    };
  }

  /** The status of a server the worker does not run: why, in words. */
  #idleStatus(server: ResolvedLsp): LspServerStatus {
    const endings = Object.keys(server.languages);
    const reason =
      server.reason ??
      (!this.deps.daemon
        ? 'language servers run in the daemon (not with --no-daemon or --set)'
        : !this.#warmed
          ? 'starts when a session opens here'
          : this.#found && !endings.some((e) => this.#found!.has(e))
            ? `no ${endings.join(' ')} file here; starts at the first one edited`
            : 'not started yet');
    return {
      name: server.name,
      state: server.state ?? 'stopped',
      command: server.command,
      source: server.source,
      extensions: endings,
      pid: null,
      startedAt: null,
      restarts: 0,
      files: 0,
      lastDiagnosticsAt: null,
      lastError: null,
      reason,
      nextRestartAt: null,
      notes: [],
    };
  }

  /** Config reload: servers changed restart, removed ones stop, newly possible ones start. */
  async reconfigure(): Promise<void> {
    if (this.#closed) return;
    if (this.#host) await this.#host.updateServers(this.#workerData().servers);
    if (this.#warmed) await this.#warm();
  }

  async close(): Promise<void> {
    this.#closed = true;
    await (this.#host ?? (await this.#starting?.catch(() => undefined)))?.close();
  }

  tools(disabled: ReadonlySet<string>): [string, ToolEntry][] {
    const off = disabled.has('lsp') || this.deps.loaded()?.config.tools.disabled.includes('lsp');
    const host = this.#running();
    if (off || !host) return [];
    const entry = lspToolEntry(this.deps.root, (query, deadline) =>
      host.query(query, deadline, 500),
    );
    return [['lsp', entry]];
  }

  calls(snapshot: () => string | undefined): EditDiagnostics {
    return editDiagnostics(
      {
        root: this.deps.root,
        host: () => this.#running(),
        wake: (file) => this.#wake(file),
        serves: (file) => this.#serves(file),
        settings: () => {
          const lsp = this.deps.loaded()?.config.lsp;
          return { wait: lsp?.diagnosticsWait ?? 3, warnings: lsp?.warnings ?? false };
        },
        snapshots: this.deps.snapshots,
        lastTree: this.#lastTree,
      },
      snapshot,
    );
  }
}

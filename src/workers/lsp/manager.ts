import path from 'node:path';
import type { Diagnostic } from 'vscode-languageserver-protocol';
import type {
  LspEvent,
  LspFileOutcome,
  LspQuery,
  LspServerSpec,
  LspServerStatus,
  LspWorkerData,
} from '../protocol/lsp.ts';
import { NifflerError } from '../protocol/wire-error.ts';
import { diagnosticLine } from '../shared/diagnostic-line.ts';
import { forModel, introduced, severityOf } from './diagnostics.ts';
import type { OpenDocument } from './documents.ts';
import { isWorkspaceFile, readDocument, shown, type Place } from './files.ts';
import { answer, type Navigator } from './navigate.ts';
import { LanguageServer, type ServerContext } from './server.ts';
import { DEFAULT_TIMING } from './timing.ts';

/** The most diagnostics of one file an outcome carries (its counts say how many there were). */
const MAX_OUTCOME_DIAGNOSTICS = 50;
/** The most lines of the `lsp` tool's diagnostics answer. */
const MAX_DIAGNOSTIC_LINES = 100;

const usage = (message: string) => new NifflerError('usage', message);

/**
 * Every language server of the workspace, routed by file name: starts them, hands them files
 * before and after a change, answers what the `lsp` tool asks, and reports their statuses.
 */
export class LspManager {
  readonly #servers = new Map<string, LanguageServer>();
  /** Files found missing before a change: what they had before it is known — nothing. */
  readonly #absent = new Set<string>();
  readonly #place: Place;
  readonly #ctx: ServerContext;

  constructor(data: LspWorkerData, post: (event: LspEvent) => void) {
    this.#place = { root: data.root, excluded: data.excluded };
    this.#ctx = {
      place: this.#place,
      timing: { ...DEFAULT_TIMING, ...definedOf(data.timing ?? {}) },
      logsDir: data.logsDir,
      ...(data.serversDir ? { serversDir: data.serversDir } : {}),
      onStatus: (status) => post({ type: 'status', status }),
    };
    for (const spec of data.servers)
      this.#servers.set(spec.name, new LanguageServer(spec, this.#ctx));
  }

  status(): LspServerStatus[] {
    return [...this.#servers.values()].map((s) => s.status());
  }

  start(list: { name: string; warmFile?: string }[]): void {
    for (const { name, warmFile } of list) this.#servers.get(name)?.start(warmFile);
  }

  /** The server of `file`'s language, if one is configured. */
  serverFor(file: string): LanguageServer | undefined {
    return [...this.#servers.values()].find((s) => s.serves(file));
  }

  /** Before a change: each file's current text to its server, and its diagnostics asked for. */
  async prepare(files: string[]): Promise<void> {
    await Promise.all(
      files.map(async (file) => {
        const server = this.serverFor(file);
        if (!server || (server.state !== 'ready' && server.state !== 'degraded')) return;
        const read = await readDocument(file, this.#place);
        if (!read.ok) {
          // A file that does not exist yet had nothing wrong with it.
          if (read.missing) {
            server.docs.close(file);
            this.#absent.add(file);
          }
          return;
        }
        const { doc } = server.docs.sync(file, read.text, server.languageOf(file));
        doc.before = server.baseline(doc, Date.now() + 10_000);
      }),
    );
  }

  /** After a change: each file's diagnostics, and which of them the change brought. */
  async diagnose(
    files: string[],
    gone: string[],
    deadline: number,
    warnings: boolean,
  ): Promise<LspFileOutcome[]> {
    for (const file of gone) this.serverFor(file)?.docs.close(file);
    return Promise.all(files.map((file) => this.#diagnoseFile(file, deadline, warnings)));
  }

  async #diagnoseFile(file: string, deadline: number, warnings: boolean): Promise<LspFileOutcome> {
    const started = Date.now();
    const base = {
      file: shown(file, this.#place),
      introduced: [],
      baseline: false,
      errors: 0,
      warnings: 0,
    };
    const server = this.serverFor(file);
    if (!server) return { ...base, server: '', outcome: 'no-server', ms: 0 };
    const outcome = (o: Partial<LspFileOutcome>): LspFileOutcome => ({
      ...base,
      server: server.spec.name,
      outcome: 'timeout',
      ms: Date.now() - started,
      ...o,
    });
    if (!isWorkspaceFile(file, this.#place))
      return outcome({ outcome: 'skipped', reason: `${base.file} is outside the workspace` });
    server.start();
    if (!(await server.whenReady(deadline))) return outcome({});
    const read = await readDocument(file, this.#place);
    if (!read.ok) {
      server.note(read.reason);
      return outcome({ outcome: 'skipped', reason: read.reason });
    }
    const prior = server.docs.get(file);
    const created = this.#absent.delete(file) && !prior;
    const before = created
      ? Promise.resolve([])
      : (prior?.before ??
        Promise.resolve(
          prior && prior.diagnostics?.version === prior.version
            ? prior.diagnostics.items
            : undefined,
        ));
    const { doc } = server.docs.sync(file, read.text, server.languageOf(file));
    const [had, after] = await Promise.all([
      within(before, deadline),
      server.diagnosticsOf(doc, deadline),
    ]);
    doc.before = undefined;
    if (!after) return outcome({});
    return outcome({ outcome: 'checked', ...this.#compare(doc, after, had, warnings) });
  }

  /** What the change brought (or, without a before, all), and the file's counts. */
  #compare(
    doc: OpenDocument,
    after: Diagnostic[],
    before: Diagnostic[] | undefined,
    warnings: boolean,
  ) {
    const counted = after.filter(
      (d) => severityOf(d) === 'error' || (warnings && severityOf(d) === 'warning'),
    );
    const brought = before ? introduced(counted, before) : counted;
    const file = shown(doc.file, this.#place);
    return {
      introduced: brought.slice(0, MAX_OUTCOME_DIAGNOSTICS).map((d) => forModel(d, file)),
      baseline: before !== undefined,
      errors: after.filter((d) => severityOf(d) === 'error').length,
      warnings: after.filter((d) => severityOf(d) === 'warning').length,
    };
  }

  /** The `lsp` tool's question, answered in compact text. */
  async query(query: LspQuery, deadline: number): Promise<string> {
    if (query.operation === 'diagnostics') return this.#diagnosticsAnswer(query.file, deadline);
    return answer(this.#navigator(deadline), query);
  }

  #navigator(deadline: number): Navigator {
    return {
      place: this.#place,
      deadline,
      serverOf: (file) => this.#readyServerOf(file, deadline),
      open: (server, file) => this.#open(server, file),
      running: () =>
        [...this.#servers.values()].filter((s) => s.state === 'ready' || s.state === 'degraded'),
      textOf: async (file) => {
        const open = this.serverFor(file)?.docs.get(file);
        if (open) return open.text;
        const read = await readDocument(file, this.#place);
        return read.ok ? read.text : undefined;
      },
    };
  }

  async #readyServerOf(file: string, deadline: number): Promise<LanguageServer> {
    if (!isWorkspaceFile(file, this.#place))
      throw usage(`${shown(file, this.#place)} is not in the workspace`);
    const server = this.serverFor(file);
    if (!server)
      throw usage(
        `no language server for ${path.extname(file) || 'files without an ending'} files here (niffler lsp status lists them)`,
      );
    server.start();
    if (await server.whenReady(deadline)) return server;
    throw new NifflerError(
      'timeout',
      `${server.spec.name} is ${server.state}${server.status().lastError ? `: ${server.status().lastError!.message}` : ''}; try again when niffler lsp status shows it ready`,
    );
  }

  async #open(server: LanguageServer, file: string): Promise<OpenDocument> {
    const read = await readDocument(file, this.#place);
    if (!read.ok) throw usage(read.reason);
    return server.docs.sync(file, read.text, server.languageOf(file)).doc;
  }

  /** A file's diagnostics (asked for now), or what the servers said of the workspace's files. */
  async #diagnosticsAnswer(file: string | undefined, deadline: number): Promise<string> {
    if (file) {
      const server = await this.#readyServerOf(file, deadline);
      const doc = await this.#open(server, file);
      const found = await server.diagnosticsOf(doc, deadline);
      if (!found)
        throw new NifflerError(
          'timeout',
          `${server.spec.name} gave no diagnostics of ${shown(file, this.#place)} in time; try again`,
        );
      return found.length
        ? cap(found.map((d) => diagnosticLine(forModel(d, shown(file, this.#place)))))
        : `no diagnostics in ${shown(file, this.#place)}`;
    }
    const lines: string[] = [];
    let files = 0;
    for (const server of this.#servers.values()) {
      const known = server.pushedFiles();
      for (const doc of server.docs.all())
        if (doc.diagnostics) known.set(doc.file, doc.diagnostics.items);
      for (const [known_file, items] of known) {
        files++;
        const shownName = shown(known_file, this.#place);
        for (const d of items)
          if (severityOf(d) === 'error' || severityOf(d) === 'warning')
            lines.push(diagnosticLine(forModel(d, shownName)));
      }
    }
    const scope = `of the ${files} file${files === 1 ? '' : 's'} the language servers have looked at (lsp diagnostics with a file checks that file now)`;
    return lines.length
      ? `${cap(lines)}\n(errors and warnings ${scope})`
      : `no errors or warnings ${scope}`;
  }

  async updateServers(specs: LspServerSpec[]): Promise<void> {
    const wanted = new Map(specs.map((s) => [s.name, s]));
    await Promise.all(
      [...this.#servers].map(async ([name, server]) => {
        const spec = wanted.get(name);
        if (spec) return server.update(spec);
        this.#servers.delete(name);
        await server.stop();
      }),
    );
    for (const spec of specs)
      if (!this.#servers.has(spec.name))
        this.#servers.set(spec.name, new LanguageServer(spec, this.#ctx));
  }

  /** Every server stopped, its process group ended. */
  async shutdown(): Promise<void> {
    await Promise.all([...this.#servers.values()].map((s) => s.stop()));
  }

  /** SIGKILL to every server's group (the thread is ending without a shutdown). */
  killAll(): void {
    for (const server of this.#servers.values()) server.kill();
  }
}

const cap = (lines: string[]): string =>
  [
    ...lines.slice(0, MAX_DIAGNOSTIC_LINES),
    ...(lines.length > MAX_DIAGNOSTIC_LINES
      ? [`(+${lines.length - MAX_DIAGNOSTIC_LINES} more)`]
      : []),
  ].join('\n');

/** `undefined` at `deadline`, unless `promise` settles first. */
const within = <T>(promise: Promise<T>, deadline: number): Promise<T | undefined> => {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), Math.max(0, deadline - Date.now()));
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
};

const definedOf = <T extends object>(value: T): Partial<T> =>
  Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;

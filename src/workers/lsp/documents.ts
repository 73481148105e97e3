import type { Diagnostic } from 'vscode-languageserver-protocol';
import { toUri } from './files.ts';

/** The documents a server keeps open at most; the least recently used is closed past it. */
const MAX_OPEN_DOCUMENTS = 64;

/** A file as its server has it open: the text and version sent last, and what it said of them. */
export interface OpenDocument {
  file: string;
  uri: string;
  languageId: string;
  version: number;
  text: string;
  used: number;
  /** When this version was sent. */
  syncedAt: number;
  /** The diagnostics of this version, once known (asked for, or pushed). */
  diagnostics?: { version: number; items: Diagnostic[]; at: number };
  /** The diagnostics of the text before the last change, asked for by `prepare`. */
  before?: Promise<Diagnostic[] | undefined>;
}

/** How a document reaches the server (didOpen, didChange, didClose). */
export interface DocumentSink {
  open(doc: OpenDocument): void;
  change(doc: OpenDocument): void;
  close(doc: OpenDocument): void;
}

/**
 * One server's open documents: opened on first use, changed with the whole text (a new version)
 * when it differs from what the server has, closed when past `MAX_OPEN_DOCUMENTS`.
 */
export class Documents {
  readonly #open = new Map<string, OpenDocument>();
  #clock = 0;

  constructor(private readonly sink: DocumentSink) {}

  get size(): number {
    return this.#open.size;
  }

  get(file: string): OpenDocument | undefined {
    return this.#open.get(file);
  }

  /** Every open document. */
  all(): OpenDocument[] {
    return [...this.#open.values()];
  }

  /** Makes the server's copy of `file` hold `text`; `changed` is false when it already did. */
  sync(file: string, text: string, languageId: string): { doc: OpenDocument; changed: boolean } {
    const doc = this.#open.get(file);
    if (doc) {
      doc.used = ++this.#clock;
      if (doc.text === text) return { doc, changed: false };
      doc.text = text;
      doc.version++;
      doc.syncedAt = Date.now();
      this.sink.change(doc);
      return { doc, changed: true };
    }
    const opened: OpenDocument = {
      file,
      uri: toUri(file),
      languageId,
      version: 1,
      text,
      used: ++this.#clock,
      syncedAt: Date.now(),
    };
    this.#open.set(file, opened);
    this.sink.open(opened);
    this.#evict();
    return { doc: opened, changed: true };
  }

  /** Closes `file` (it was removed, or is left out now). */
  close(file: string): void {
    const doc = this.#open.get(file);
    if (!doc) return;
    this.#open.delete(file);
    this.sink.close(doc);
  }

  /** Forgets every document without telling anyone (the server is gone). */
  clear(): void {
    this.#open.clear();
  }

  #evict(): void {
    while (this.#open.size > MAX_OPEN_DOCUMENTS) {
      const oldest = [...this.#open.values()].reduce((a, b) => (a.used <= b.used ? a : b));
      this.close(oldest.file);
    }
  }
}

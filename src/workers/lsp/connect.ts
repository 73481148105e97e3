import path from 'node:path';
import {
  ConfigurationRequest,
  createProtocolConnection,
  DidChangeTextDocumentNotification,
  DidCloseTextDocumentNotification,
  DidOpenTextDocumentNotification,
  LogMessageNotification,
  PublishDiagnosticsNotification,
  StreamMessageReader,
  StreamMessageWriter,
  type ProtocolConnection,
  type PublishDiagnosticsParams,
} from 'vscode-languageserver-protocol/node';
import type { LspServerSpec } from '../protocol/lsp.ts';
import type { DocumentSink } from './documents.ts';
import { initializeParams } from './initialize.ts';
import type { ServerProcess } from './process.ts';

// A server's JSON-RPC connection over its process's pipes (vscode-jsonrpc's framing, the
// protocol's types): what it asks of niffler answered, what it says handed to its owner, and the
// documents niffler opens, changes and closes sent to it.

/** Requests of a server answered with null: niffler registers nothing, shows nothing, refreshes nothing. */
const ACKNOWLEDGED = [
  'client/registerCapability',
  'client/unregisterCapability',
  'window/workDoneProgress/create',
  'window/showMessageRequest',
  'window/showDocument',
  'workspace/diagnostic/refresh',
  'workspace/semanticTokens/refresh',
  'workspace/inlayHint/refresh',
  'workspace/codeLens/refresh',
];

/** What the connection hands to the server's owner. */
interface Heard {
  /** Bytes came on stdout (it is alive). */
  bytes(count: number): void;
  diagnostics(params: PublishDiagnosticsParams): void;
  log(message: string): void;
}

/** The connection over `proc`'s pipes, listening, with the server's requests answered. */
export const connectServer = (
  proc: ServerProcess,
  spec: () => LspServerSpec,
  root: string,
  heard: Heard,
): ProtocolConnection => {
  const stdout = proc.child.stdout!;
  stdout.on('data', (chunk: Buffer) => heard.bytes(chunk.length));
  const conn = createProtocolConnection(
    new StreamMessageReader(stdout),
    new StreamMessageWriter(proc.child.stdin!),
  );
  conn.onNotification(PublishDiagnosticsNotification.type, (params) => heard.diagnostics(params));
  conn.onNotification(LogMessageNotification.type, (params) => heard.log(params.message));
  conn.onRequest(ConfigurationRequest.type, (params) => params.items.map(() => null));
  conn.onRequest('workspace/workspaceFolders', () => [
    { uri: initializeParams(spec(), root).rootUri, name: path.basename(root) },
  ]);
  // Registrations, progress tokens, refreshes, message boxes: acknowledged, nothing more.
  for (const method of ACKNOWLEDGED) conn.onRequest(method, () => null);
  conn.onRequest('workspace/applyEdit', () => ({
    applied: false,
    failureReason: 'niffler applies no edits of a language server',
  }));
  conn.onError(() => undefined);
  conn.listen();
  return conn;
};

/** Documents sent over the connection of the moment (none while there is none). */
export const documentSink = (conn: () => ProtocolConnection | undefined): DocumentSink => ({
  open: (doc) =>
    void conn()?.sendNotification(DidOpenTextDocumentNotification.type, {
      textDocument: {
        uri: doc.uri,
        languageId: doc.languageId,
        version: doc.version,
        text: doc.text,
      },
    }),
  change: (doc) =>
    void conn()?.sendNotification(DidChangeTextDocumentNotification.type, {
      textDocument: { uri: doc.uri, version: doc.version },
      contentChanges: [{ text: doc.text }],
    }),
  close: (doc) =>
    void conn()?.sendNotification(DidCloseTextDocumentNotification.type, {
      textDocument: { uri: doc.uri },
    }),
});

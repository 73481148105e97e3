import path from 'node:path';
import type { InitializeParams } from 'vscode-languageserver-protocol';
import type { LspServerSpec } from '../protocol/lsp.ts';
import { toUri } from './files.ts';

/**
 * What niffler tells a server it is at `initialize`: the workspace root as its one folder, and
 * only the client capabilities it uses — synchronization of whole texts, diagnostics (pushed,
 * versioned, or pulled), definitions, references, hover and symbols.
 */
export const initializeParams = (
  spec: LspServerSpec,
  root: string,
): InitializeParams & { rootUri: string } => ({
  processId: process.pid,
  clientInfo: { name: 'niffler' },
  rootUri: toUri(root),
  rootPath: root,
  workspaceFolders: [{ uri: toUri(root), name: path.basename(root) }],
  capabilities: {
    textDocument: {
      synchronization: { dynamicRegistration: false, didSave: false },
      publishDiagnostics: { relatedInformation: false, versionSupport: true },
      diagnostic: { dynamicRegistration: false, relatedDocumentSupport: false },
      definition: { linkSupport: true },
      references: {},
      hover: { contentFormat: ['markdown', 'plaintext'] },
      documentSymbol: { hierarchicalDocumentSymbolSupport: true },
    },
    workspace: {
      workspaceFolders: true,
      configuration: true,
      symbol: {},
      didChangeWatchedFiles: { dynamicRegistration: false },
    },
    window: { workDoneProgress: false },
  },
  ...(spec.initializationOptions !== undefined
    ? { initializationOptions: spec.initializationOptions }
    : {}),
});

/** A language server niffler knows without configuration. */
export interface BuiltinServer {
  /** Commands tried in order (the first found runs), each with its arguments. */
  commands: { command: string; args: string[] }[];
  /** File name endings it serves, with the LSP language id of each. */
  languages: Record<string, string>;
  /**
   * What of the project the server runs besides itself (a build tool, an interpreter), when it
   * does: such a server starts only in a trusted repository — its files decide what runs.
   */
  runsProjectCode?: string;
  /** How to get it, for `lsp status` when it is missing. */
  install: string;
  /** Sent at `initialize` unless an entry's own say otherwise (merged one level deep). */
  initializationOptions?: Record<string, unknown>;
}

/**
 * The language servers found without configuration, on PATH or in the repository's
 * node_modules/.bin. `lsp.<name>` in the config changes one, or adds one of your own.
 */
export const BUILTIN_SERVERS: Record<string, BuiltinServer> = {
  typescript: {
    commands: [{ command: 'typescript-language-server', args: ['--stdio'] }],
    languages: {
      '.ts': 'typescript',
      '.tsx': 'typescriptreact',
      '.mts': 'typescript',
      '.cts': 'typescript',
      '.js': 'javascript',
      '.jsx': 'javascriptreact',
      '.mjs': 'javascript',
      '.cjs': 'javascript',
    },
    install: 'npm install -g typescript-language-server typescript',
    // One tsserver, not two: the syntax server keeps an editor responsive while a project loads,
    // which niffler does not need (309 MiB instead of 486 for the fixture project, and a cold
    // project's first diagnostics in half the time); no typings fetched from npm behind its back.
    initializationOptions: {
      disableAutomaticTypingAcquisition: true,
      tsserver: { useSyntaxServer: 'never' },
    },
  },
  python: {
    commands: [
      { command: 'pyright-langserver', args: ['--stdio'] },
      { command: 'basedpyright-langserver', args: ['--stdio'] },
    ],
    languages: { '.py': 'python', '.pyi': 'python' },
    runsProjectCode:
      "the project's Python interpreter (its virtual environment), to find its imports",
    install: 'npm install -g pyright (or pip install basedpyright)',
  },
  go: {
    commands: [{ command: 'gopls', args: [] }],
    languages: { '.go': 'go' },
    runsProjectCode: "the go command with the module's settings (its toolchain, cgo)",
    install: 'go install golang.org/x/tools/gopls@latest',
  },
  rust: {
    commands: [{ command: 'rust-analyzer', args: [] }],
    languages: { '.rs': 'rust' },
    runsProjectCode: "cargo, and with it the project's build scripts and procedural macros",
    install: 'rustup component add rust-analyzer',
  },
};

/** Keys of `lsp:` that are settings, not servers. */
export const LSP_SETTINGS = ['enabled', 'diagnosticsWait', 'warnings'] as const;

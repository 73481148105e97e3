/**
 * One thing a repository's config contributes that starts a process, opens a connection or
 * widens what tools may do. `key` names it across runs: `repo:mcpServers.github`,
 * `mcp-json:mcpServers.db`, `repo:tools.policy.bash`.
 */
export interface Part {
  key: string;
  /** The key path inside its file. */
  path: string[];
  file: string;
  line: number | undefined;
  /** As written, before `${VAR}` expansion. */
  value: unknown;
  /**
   * Servers stay in the config (listed, not started) when untrusted; settings are removed;
   * extensions (agents, commands, repository tools, tasks: files, not config keys) are ignored;
   * scripts (repository files those run, by their content: `trust/scripts.ts`) are not run.
   */
  kind: 'server' | 'setting' | 'extension' | 'script';
}

/** Claude Code's tool names and the niffler tools they stand for. */
const CLAUDE_TOOLS: Record<string, string> = {
  Read: 'read_file',
  Write: 'write_file',
  Edit: 'edit_file',
  MultiEdit: 'edit_file',
  NotebookEdit: 'edit_file',
  Bash: 'bash',
  Glob: 'glob',
  Grep: 'grep',
  LS: 'list_dir',
  WebFetch: 'fetch',
  TodoWrite: 'todo',
  Task: 'task',
  LSP: 'lsp',
};

/**
 * A tool name or glob as written in a Claude Code (or niffler) file, in niffler's names:
 * `Read` → `read_file`, `mcp__memory__create` → `memory__create`; niffler names pass unchanged.
 * Undefined for a rule niffler cannot hold to (`Bash(git add:*)`: one command, not the tool).
 */
export const nifflerToolName = (name: string): string | undefined => {
  const trimmed = name.trim();
  if (/\(.*\)$/.test(trimmed)) return undefined;
  if (trimmed.startsWith('mcp__')) return trimmed.slice('mcp__'.length);
  return CLAUDE_TOOLS[trimmed] ?? trimmed;
};

/** The names a tool is known by, for hook matchers: niffler's, and Claude Code's where it has one. */
export const toolAliases = (name: string, kind: string): string[] => {
  const claude = Object.entries(CLAUDE_TOOLS).find(([, ours]) => ours === name)?.[0];
  return [name, ...(claude ? [claude] : []), ...(kind === 'mcp' ? [`mcp__${name}`] : [])];
};

/** A list written as YAML or as Claude Code's comma-separated string (`Read, Grep, Glob`). */
export const listOf = (value: string | string[] | undefined): string[] | undefined =>
  value === undefined
    ? undefined
    : (typeof value === 'string' ? value.split(',') : value).map((s) => s.trim()).filter(Boolean);

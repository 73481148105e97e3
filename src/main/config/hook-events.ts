// Hook events and handler types by Claude Code's names (its hooks reference; Codex uses the same
// names). No schema library here: the readers of other tools' files use these lists too, and they
// run on paths that load none.

/** Every event Claude Code documents hooks for, in its lifecycle's order. */
export const CLAUDE_HOOK_EVENTS = [
  'SessionStart',
  'Setup',
  'InstructionsLoaded',
  'UserPromptSubmit',
  'UserPromptExpansion',
  'MessageDisplay',
  'PreToolUse',
  'PermissionRequest',
  'PermissionDenied',
  'PostToolUse',
  'PostToolUseFailure',
  'PostToolBatch',
  'Notification',
  'SubagentStart',
  'SubagentStop',
  'TaskCreated',
  'TaskCompleted',
  'Stop',
  'StopFailure',
  'TeammateIdle',
  'ConfigChange',
  'CwdChanged',
  'DirectoryAdded',
  'FileChanged',
  'WorktreeCreate',
  'WorktreeRemove',
  'PreCompact',
  'PostCompact',
  'PreModelSwitch',
  'PostModelSwitch',
  'Elicitation',
  'ElicitationResult',
  'SessionEnd',
] as const;
export type ClaudeHookEvent = (typeof CLAUDE_HOOK_EVENTS)[number];

/**
 * The events niffler has a moment for, and so runs hooks on: a session's start and end, each
 * prompt, each tool call (before; after, as it succeeded or failed), a subagent's start and stop,
 * the end of an answer, and compaction. The others are accepted and listed as not fired.
 */
const HOOK_EVENTS = [
  'SessionStart',
  'UserPromptSubmit',
  'PreToolUse',
  'PostToolUse',
  'PostToolUseFailure',
  'SubagentStart',
  'SubagentStop',
  'Stop',
  'PreCompact',
  'SessionEnd',
] as const satisfies readonly ClaudeHookEvent[];
export type HookEvent = (typeof HOOK_EVENTS)[number];

const FIRED: ReadonlySet<string> = new Set(HOOK_EVENTS);
const KNOWN: ReadonlySet<string> = new Set(CLAUDE_HOOK_EVENTS);

/** Whether niffler runs hooks on `event`. */
export const isFiredEvent = (event: string): event is HookEvent => FIRED.has(event);

/** Whether Claude Code documents `event`. */
export const isClaudeHookEvent = (event: string): event is ClaudeHookEvent => KNOWN.has(event);

/** The kinds of hook handler Claude Code documents; niffler runs `command`. */
export const HOOK_TYPES = ['command', 'http', 'mcp_tool', 'prompt', 'agent'] as const;

/** What is said of an event niffler accepts but has no moment for. */
export const NOT_FIRED = 'not fired in niffler (it has no such moment); ignored';

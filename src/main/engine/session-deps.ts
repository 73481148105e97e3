import type { ModelSpec } from '../../workers/protocol/api.ts';
import { fail } from '../../workers/protocol/tool-result.ts';
import type { LoadedConfig } from '../extensions/workspace-config.ts';
import type { CommandRunner } from '../extensions/expand.ts';
import type { Semaphore } from '../extensions/subagents.ts';
import { DEFAULT_AGENT } from '../extensions/turn.ts';
import type { SessionLsp } from '../lsp/service.ts';
import type { ApprovalStore } from './approvals.ts';
import type { ContextWindows } from './context/window.ts';
import type { SnapshotStore } from './snapshots.ts';
import type { LlmStreamer } from './step.ts';
import type { BuiltinTools, McpTools } from './tool-calls.ts';

/** What a session is given by the engine: its workspace's places, workers, stores and config. */
export interface SessionDeps {
  root: string;
  /** `$NIFFLER_HOME`: the user's own instruction files. */
  home: string;
  sessionsDir: string;
  api: LlmStreamer;
  tools: BuiltinTools;
  mcp: McpTools;
  approvals: ApprovalStore;
  config: () => LoadedConfig;
  resolveModel: (name: string) => ModelSpec;
  /** Context windows of models, asked of their providers once per daemon. */
  windows: ContextWindows;
  /** Where a cleared tool output is saved (the model may read it there). */
  outputsDir: string;
  /** This workspace's undo snapshots. */
  snapshots: SnapshotStore;
  /** MCP servers' instructions for the system prompt (trusted, ready servers). */
  instructions?: () => { server: string; text: string }[];
  /** How many subagents run at once in this daemon. */
  subagents?: Semaphore;
  /** Runs hooks, repository tools and `` !`cmd` `` in bash's sandbox (the tools pool). */
  runCommand?: CommandRunner;
  /** Language servers: the `lsp` tool, and diagnostics after edits (src/main/lsp/). */
  lsp?: SessionLsp;
}

export const noCommands: CommandRunner = async () => fail('exec-failed', 'no command runner here');

/** `agent.default`, or `build` while the config does not load. */
export const defaultAgent = (deps: SessionDeps): string => {
  try {
    return deps.config().config.agent.default;
  } catch {
    return DEFAULT_AGENT; // The turn will say what is wrong with the config.
  }
};

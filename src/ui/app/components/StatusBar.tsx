import path from 'node:path';
import { Box, Text } from 'ink';
import type { McpServerStatus } from '../../../main/protocol.ts';
import type { Totals } from '../state/types.ts';
import { formatCost, formatTokens } from '../format.ts';

interface StatusBarProps {
  workspace: string;
  model: string;
  servers: McpServerStatus[];
  totals: Totals;
  /** What the last request weighed against the window. */
  context?: { used: number; window: number } | undefined;
  /** A one-line hint on the right (e.g. "ctrl-c again to exit"). */
  hint?: string;
  /** The session's agent profile (shown unless it is `build`). */
  agent?: string;
  /** Servers and tools switched off for this session. */
  disabled?: string[];
}

const FAILED = new Set(['failed', 'degraded']);
/** Not ready yet, and a retry will have them: still starting, or waiting for a login. */
const PENDING = new Set(['starting', 'needs-auth']);
/** Names shown of the servers not ready, at most. */
const NAMED = 3;

/** `a, b, c +2`: at most `NAMED` names. */
const names = (list: string[]): string =>
  list.length > NAMED
    ? `${list.slice(0, NAMED).join(', ')} +${list.length - NAMED}`
    : list.join(', ');

/**
 * Workspace, model, MCP servers ready/total (those not ready yet named in yellow — a retry will
 * have their tools — failures in red), tokens and cost.
 */
export const StatusBar = ({
  workspace,
  model,
  servers,
  totals,
  context,
  hint,
  agent,
  disabled = [],
}: StatusBarProps) => {
  const counted = servers.filter((s) => s.state !== 'disabled');
  const ready = counted.filter((s) => s.state === 'ready').length;
  const failed = counted.filter((s) => FAILED.has(s.state)).map((s) => s.name);
  const pending = counted.filter((s) => PENDING.has(s.state)).map((s) => s.name);
  const untrusted = counted.filter((s) => s.state === 'untrusted').length;
  return (
    <Box justifyContent="space-between">
      <Text>
        <Text bold>{path.basename(workspace)}</Text>
        <Text dimColor>{' | '}</Text>
        <Text color="cyan">{model}</Text>
        {agent && agent !== 'build' ? <Text color="magenta">{` (${agent})`}</Text> : null}
        {disabled.length ? (
          <Text color="yellow">{` | ${disabled.length} off: ${disabled.join(', ')}`}</Text>
        ) : null}
        {counted.length ? (
          <>
            <Text dimColor>{' | '}</Text>
            <Text {...(pending.length ? { color: 'yellow' } : {})}>
              MCP {ready}/{counted.length}
            </Text>
            {pending.length ? <Text color="yellow"> ({names(pending)} not ready)</Text> : null}
            {failed.length ? <Text color="red"> ({names(failed)} failed)</Text> : null}
            {untrusted ? <Text color="yellow"> ({untrusted} untrusted)</Text> : null}
          </>
        ) : null}
        <Text dimColor>{' | '}</Text>
        <Text>
          {formatTokens(totals.inputTokens)} in / {formatTokens(totals.outputTokens)} out
        </Text>
        {totals.costUsd > 0 ? <Text>{` | ${formatCost(totals.costUsd)}`}</Text> : null}
        {context ? (
          <Text {...(context.used > context.window * 0.8 ? { color: 'yellow' } : {})}>
            {` | ctx ${Math.round((context.used / context.window) * 100)}% of ${formatTokens(context.window)}`}
          </Text>
        ) : null}
      </Text>
      <Text dimColor>{hint ?? '/help'}</Text>
    </Box>
  );
};

import { Text } from 'ink';
import Spinner from 'ink-spinner';
import type { RunningTurn } from '../state/types.ts';
import { formatElapsed } from '../format.ts';

interface TurnIndicatorProps {
  turn: RunningTurn;
  elapsedMs: number;
}

/** Below the live transcript while a turn runs: waiting for MCP servers, or working. */
export const TurnIndicator = ({ turn, elapsedMs }: TurnIndicatorProps) => (
  <Text color={turn.waitingFor.length ? 'yellow' : 'cyan'}>
    <Spinner type="dots" />{' '}
    {turn.waitingFor.length
      ? `waiting for MCP servers to start: ${turn.waitingFor.join(', ')}`
      : 'working'}
    <Text dimColor> {formatElapsed(Math.max(0, elapsedMs))} · esc to cancel</Text>
  </Text>
);

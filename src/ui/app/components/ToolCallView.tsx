import { Box, Text } from 'ink';
import Spinner from 'ink-spinner';
import type { ToolCard } from '../state/types.ts';
import { formatArgs, formatElapsed, toolLabel } from '../format.ts';

interface ToolCallViewProps {
  card: ToolCard;
  /** Milliseconds since the call started, for a running card. */
  elapsedMs?: number;
  expanded?: boolean;
}

const ICONS = { done: '✓', error: '✗', denied: '⊘' } as const;
const COLORS = { done: 'green', error: 'red', denied: 'yellow' } as const;

/** One tool call: name, server, key arguments, spinner and time, then a one-line result. */
export const ToolCallView = ({ card, elapsedMs = 0, expanded = false }: ToolCallViewProps) => {
  const args = formatArgs(card.args);
  const head = (
    <Text>
      <Text bold>{toolLabel(card.name, card.server)}</Text>
      {card.server ? <Text dimColor> ({card.server})</Text> : null}
      {args ? <Text> {args}</Text> : null}
      <Text dimColor>
        {' · '}
        {card.status === 'running'
          ? formatElapsed(elapsedMs)
          : card.status === 'denied'
            ? 'denied'
            : formatElapsed(card.ms ?? 0)}
      </Text>
    </Text>
  );
  if (card.status === 'running')
    return (
      <Box flexDirection="column">
        <Box>
          <Text color="cyan">
            <Spinner type="dots" />{' '}
          </Text>
          {head}
        </Box>
        {card.progress ? <Text dimColor wrap="truncate-end">{`  ⎿ ${card.progress}`}</Text> : null}
      </Box>
    );
  const color = COLORS[card.status];
  const body = expanded && card.detail ? card.detail : card.summary;
  return (
    <Box flexDirection="column">
      <Box>
        <Text color={color}>{ICONS[card.status]} </Text>
        {head}
      </Box>
      {body ? (
        <Box>
          <Box flexShrink={0}>
            <Text dimColor>{'  ⎿ '}</Text>
          </Box>
          <Text
            {...(card.status === 'done' ? { dimColor: true } : { color })}
            wrap={expanded ? 'wrap' : 'truncate-end'}
          >
            {body}
          </Text>
        </Box>
      ) : null}
      {card.problem && !expanded ? (
        <Text color="red" wrap="truncate-end">{`  ⎿ ${card.problem}`}</Text>
      ) : null}
    </Box>
  );
};

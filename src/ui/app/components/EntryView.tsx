import { Box, Text } from 'ink';
import Spinner from 'ink-spinner';
import type { Entry } from '../state/types.ts';
import { AssistantMessage, UserMessage } from './MessageView.tsx';
import { ToolCallView } from './ToolCallView.tsx';
import { skillLine } from '../../render/turn.ts';

/** A skill activated, as a card. */
const SkillCard = ({ entry }: { entry: Extract<Entry, { kind: 'skill' }> }) => (
  <Box borderStyle="round" borderColor="cyan" paddingX={1}>
    <Text color="cyan">{skillLine({ type: 'skill', ...entry })}</Text>
  </Box>
);

interface EntryViewProps {
  entry: Entry;
  width: number;
  color: boolean;
  expanded: boolean;
  now: number;
}

const NOTICE_COLORS = { info: undefined, warn: 'yellow', error: 'red' } as const;

/** A notice: its level as a mark and a colour. */
const NoticeLine = ({ entry }: { entry: Extract<Entry, { kind: 'notice' }> }) => {
  const noticeColor = NOTICE_COLORS[entry.level];
  return (
    <Text {...(noticeColor ? { color: noticeColor } : { dimColor: true })}>
      {entry.level === 'error' ? '✗ ' : entry.level === 'warn' ? '! ' : '· '}
      {entry.text}
    </Text>
  );
};

/** A `!shell` command: a spinner while it runs, then its exit code and output. */
const ShellEntry = ({ entry }: { entry: Extract<Entry, { kind: 'shell' }> }) => (
  <Box flexDirection="column" marginTop={1}>
    <Box>
      {entry.running ? (
        <Text color="cyan">
          <Spinner type="dots" />{' '}
        </Text>
      ) : (
        <Text color={entry.exitCode === 0 ? 'green' : 'red'}>! </Text>
      )}
      <Text bold>{entry.command}</Text>
      {!entry.running && entry.exitCode !== 0 ? (
        <Text color="red"> (exit {entry.exitCode ?? 'killed'})</Text>
      ) : null}
    </Box>
    {entry.output ? <Text dimColor>{entry.output.replace(/\n+$/, '')}</Text> : null}
  </Box>
);

/** One transcript entry, whatever its kind. */
export const EntryView = ({ entry, width, color, expanded, now }: EntryViewProps) => {
  switch (entry.kind) {
    case 'user':
      return <UserMessage text={entry.text} attachments={entry.attachments} />;
    case 'assistant':
      return (
        <AssistantMessage
          text={entry.text}
          reasoning={entry.reasoning}
          width={width}
          color={color}
          expanded={expanded}
        />
      );
    case 'tool':
      return <ToolCallView card={entry} elapsedMs={now - entry.startedAt} expanded={expanded} />;
    case 'notice':
      return <NoticeLine entry={entry} />;
    case 'skill':
      return <SkillCard entry={entry} />;
    case 'output':
      return (
        <Box flexDirection="column" marginTop={1}>
          <Text bold>{entry.title}</Text>
          <Text>{entry.text}</Text>
        </Box>
      );
    case 'shell':
      return <ShellEntry entry={entry} />;
    case 'divider':
      return (
        <Box marginTop={1}>
          <Text dimColor>{`── ${entry.text} ──`}</Text>
        </Box>
      );
  }
};

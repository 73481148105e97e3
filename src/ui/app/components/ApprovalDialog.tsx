import { Box, Text } from 'ink';
import type { ApprovalAnswer, ApprovalAsk } from '../../../main/protocol.ts';
import { truncate } from '../../render/format.ts';
import { toolLabel } from '../format.ts';
import { SelectDialog, type Choice } from './SelectDialog.tsx';

interface ApprovalDialogProps {
  ask: ApprovalAsk;
  onAnswer: (answer: ApprovalAnswer) => void;
}

const CHOICES: Choice<ApprovalAnswer>[] = [
  { label: 'Allow once', key: 'y', value: 'once' },
  { label: 'Allow for this session', key: 's', value: 'session' },
  { label: 'Always allow in this repository', key: 'a', value: 'repo' },
  { label: 'Deny', key: 'n', value: 'deny' },
];

const argLines = (args: Record<string, unknown>): string[] =>
  Object.entries(args).map(([key, value]) => {
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    const firstLines = text.split('\n').slice(0, 6).join('\n    ');
    return `${key}: ${truncate(firstLines, 400)}`;
  });

/** Asks whether a tool call may run: tool, server, arguments, annotations, and why it asks. */
export const ApprovalDialog = ({ ask, onAnswer }: ApprovalDialogProps) => (
  <SelectDialog
    title={`Allow ${toolLabel(ask.tool, ask.server)}${ask.server ? ` from ${ask.server}` : ''}?`}
    choices={CHOICES}
    onSelect={onAnswer}
    escape="deny"
    borderColor={ask.destructive ? 'red' : 'yellow'}
  >
    <Text>
      {ask.readOnly ? (
        <Text color="green">read-only</Text>
      ) : (
        <Text color="yellow">may change things</Text>
      )}
      {ask.destructive ? <Text color="red"> · destructive</Text> : null}
      <Text dimColor> · {ask.reason}</Text>
    </Text>
    <Box flexDirection="column" marginTop={1}>
      {argLines(ask.args).map((line, i) => (
        <Text key={i}>{line}</Text>
      ))}
    </Box>
  </SelectDialog>
);

import { Box, Text } from 'ink';
import { SelectDialog } from './SelectDialog.tsx';

export interface TrustDialogProps {
  servers: { name: string; command: string }[];
  onAnswer: (trust: boolean) => void;
}

/** First use of a repository whose config starts processes: show them, offer to trust it. */
export const TrustDialog = ({ servers, onAnswer }: TrustDialogProps) => (
  <SelectDialog
    title="This repository's config starts MCP servers. Trust it?"
    choices={[
      { label: 'Trust this repository and start them', key: 'y', value: true },
      { label: 'Not now (they stay off)', key: 'n', value: false },
    ]}
    onSelect={onAnswer}
    escape={false}
  >
    <Box flexDirection="column">
      {servers.map((server) => (
        <Text key={server.name}>
          <Text bold>{server.name}</Text>: {server.command}
        </Text>
      ))}
      <Text dimColor>Same as niffler trust; a changed command asks again.</Text>
    </Box>
  </SelectDialog>
);

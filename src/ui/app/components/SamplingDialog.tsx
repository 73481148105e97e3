import { Text } from 'ink';
import { SelectDialog } from './SelectDialog.tsx';

interface SamplingDialogProps {
  server: string;
  summary: string;
  maxTokens: number;
  onAnswer: (approve: boolean) => void;
}

/** Asks whether an MCP server may use the model (`sampling/createMessage`). */
export const SamplingDialog = ({ server, summary, maxTokens, onAnswer }: SamplingDialogProps) => (
  <SelectDialog
    title={`${server} asks to use the model (up to ${maxTokens} tokens)`}
    choices={[
      { label: 'Allow', key: 'y', value: true },
      { label: 'Decline', key: 'n', value: false },
    ]}
    onSelect={onAnswer}
    escape={false}
  >
    <Text>{summary}</Text>
  </SelectDialog>
);

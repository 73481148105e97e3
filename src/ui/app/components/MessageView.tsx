import { Box, Text } from 'ink';
import { renderMarkdown } from '../markdown.ts';

interface UserMessageProps {
  text: string;
  attachments: string[];
}

/** The user's message, with the files it attached. */
export const UserMessage = ({ text, attachments }: UserMessageProps) => (
  <Box flexDirection="column" marginTop={1}>
    <Box>
      <Text color="cyan">{'> '}</Text>
      <Text>{text}</Text>
    </Box>
    {attachments.map((file) => (
      <Text key={file} dimColor>
        {'  + '}
        {file}
      </Text>
    ))}
  </Box>
);

interface AssistantMessageProps {
  text: string;
  reasoning: string;
  width: number;
  color: boolean;
  /** Reasoning shown in full instead of one collapsed line. */
  expanded?: boolean;
}

const words = (text: string): number => text.split(/\s+/).filter(Boolean).length;

/** Assistant text rendered as markdown; its reasoning dimmed and collapsed to one line. */
export const AssistantMessage = ({
  text,
  reasoning,
  width,
  color,
  expanded = false,
}: AssistantMessageProps) => {
  const markdown = renderMarkdown(text, { width: width - 2, color });
  return (
    <Box flexDirection="column">
      {reasoning ? (
        <Box>
          <Text dimColor>{'✻ '}</Text>
          <Text dimColor italic>
            {expanded ? reasoning.trim() : `Thinking (${words(reasoning)} words; ctrl-o to expand)`}
          </Text>
        </Box>
      ) : null}
      {markdown ? (
        <Box>
          <Text>{'● '}</Text>
          <Text>{markdown}</Text>
        </Box>
      ) : null}
    </Box>
  );
};

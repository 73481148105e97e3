import { useState, type ReactNode } from 'react';
import { Box, Text, useInput } from 'ink';

export interface Choice<T> {
  label: string;
  /** A single key that picks this choice at once. */
  key: string;
  value: T;
}

interface SelectDialogProps<T> {
  title: string;
  children?: ReactNode;
  choices: Choice<T>[];
  onSelect: (value: T) => void;
  /** What Esc picks (e.g. deny). */
  escape: T;
  borderColor?: string;
}

/** A bordered question with numbered choices: ↑/↓ and Enter, a choice's key, or Esc. */
export const SelectDialog = <T,>({
  title,
  children,
  choices,
  onSelect,
  escape,
  borderColor = 'yellow',
}: SelectDialogProps<T>) => {
  const [index, setIndex] = useState(0);
  useInput((input, key) => {
    if (key.escape) return onSelect(escape);
    if (key.upArrow) return setIndex((i) => (i + choices.length - 1) % choices.length);
    if (key.downArrow || key.tab) return setIndex((i) => (i + 1) % choices.length);
    if (key.return) return onSelect(choices[index]!.value);
    const byNumber = Number(input);
    const picked =
      Number.isInteger(byNumber) && byNumber >= 1
        ? choices[byNumber - 1]
        : choices.find((c) => c.key === input.toLowerCase());
    if (picked) onSelect(picked.value);
  });
  return (
    <Box flexDirection="column" borderStyle="round" borderColor={borderColor} paddingX={1}>
      <Text bold>{title}</Text>
      {children}
      <Box flexDirection="column" marginTop={1}>
        {choices.map((choice, i) => (
          <Text key={choice.label} {...(i === index ? { color: 'cyan' } : {})}>
            {i === index ? '› ' : '  '}
            {i + 1}. {choice.label} <Text dimColor>({choice.key})</Text>
          </Text>
        ))}
      </Box>
    </Box>
  );
};

import { useState } from 'react';
import { Box, Text, useInput } from 'ink';
import type { McpElicitation, McpElicitationAnswer } from '../../../workers/protocol/mcp.ts';
import { buildAnswer, cycleValue, fieldsFromSchema, type FormField } from '../elicitation.ts';

interface ElicitationFormProps {
  server: string;
  elicitation: McpElicitation;
  onAnswer: (answer: McpElicitationAnswer) => void;
}

const shown = (field: FormField, focused: boolean): string => {
  switch (field.type) {
    case 'boolean':
      return field.value === 'true' ? '[x]' : '[ ]';
    case 'enum':
      return focused ? `‹ ${field.value} ›` : field.value;
    case 'list':
      return `${field.value}${focused ? '▏' : ''}${field.options.length ? `  (${field.options.join(', ')})` : ''}`;
    case 'string':
    case 'number':
    case 'integer':
      return `${field.value}${focused ? '▏' : ''}`;
  }
};

/** A form built from the server's requested schema: Tab/↑/↓ move, Enter on the last field sends, Esc declines. */
export const ElicitationForm = ({ server, elicitation, onAnswer }: ElicitationFormProps) => {
  const [fields, setFields] = useState(() => fieldsFromSchema(elicitation.requestedSchema));
  const [focus, setFocus] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const edit = (fn: (field: FormField) => string) =>
    setFields((all) => all.map((f, i) => (i === focus ? { ...f, value: fn(f) } : f)));
  const submit = () => {
    const built = buildAnswer(fields);
    if (built.ok) onAnswer(built.answer);
    else setError(built.error);
  };
  useInput((input, key) => {
    const field = fields[focus];
    if (key.escape) return onAnswer({ action: 'decline', reason: 'the user declined' });
    if (key.upArrow) return setFocus((f) => Math.max(0, f - 1));
    if (key.downArrow || key.tab) return setFocus((f) => Math.min(fields.length - 1, f + 1));
    if (key.return) return focus >= fields.length - 1 ? submit() : setFocus(focus + 1);
    if (!field) return;
    if (key.leftArrow || key.rightArrow) return edit((f) => cycleValue(f, key.leftArrow ? -1 : 1));
    if (field.type === 'boolean' || field.type === 'enum') {
      if (input === ' ') edit((f) => cycleValue(f, 1));
      return;
    }
    if (key.backspace || key.delete) return edit((f) => f.value.slice(0, -1));
    if (input && !key.ctrl && !key.meta) edit((f) => f.value + input);
  });
  return (
    <Box flexDirection="column" borderStyle="round" borderColor="magenta" paddingX={1}>
      <Text bold>
        {server} asks: {elicitation.message}
      </Text>
      <Box flexDirection="column" marginTop={1}>
        {fields.map((field, i) => (
          <Text key={field.name} {...(i === focus ? { color: 'cyan' } : {})}>
            {i === focus ? '› ' : '  '}
            {field.label}
            {field.required ? '*' : ''}: {shown(field, i === focus)}
            {i === focus && field.description ? <Text dimColor> {field.description}</Text> : null}
          </Text>
        ))}
      </Box>
      {error ? <Text color="red">{error}</Text> : null}
      <Text dimColor>Enter: next / send · Tab ↑ ↓: move · ← → space: choose · Esc: decline</Text>
    </Box>
  );
};

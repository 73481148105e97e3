import { Box, Text } from 'ink';
import type { EditorState } from '../editor.ts';

interface ComposerProps {
  editor: EditorState;
  /** Completions for the token at the cursor; Tab takes the first. */
  suggestions: string[];
  placeholder?: string;
  /** False under NO_COLOR: the cursor cannot be drawn in reverse video, so it is drawn as text. */
  color?: boolean;
}

const Cursor = ({ char, color }: { char: string; color: boolean }) =>
  color ? <Text inverse>{char}</Text> : <Text>{char === ' ' ? '_' : `|${char}`}</Text>;

const withCursor = (line: string, column: number | null, color: boolean) => {
  if (column === null) return <Text>{line || ' '}</Text>;
  return (
    <Text>
      {line.slice(0, column)}
      <Cursor char={line[column] ?? ' '} color={color} />
      {line.slice(column + 1)}
    </Text>
  );
};

/** The multi-line input box, its cursor, and completions below it. */
export const Composer = ({ editor, suggestions, placeholder, color = true }: ComposerProps) => {
  const lines = editor.text.split('\n');
  let offset = 0;
  return (
    <Box flexDirection="column">
      <Box flexDirection="column" borderStyle="round" borderDimColor paddingX={1}>
        {editor.text === '' && placeholder ? (
          <Text>
            <Text color="cyan">{'> '}</Text>
            <Cursor char=" " color={color} />
            <Text dimColor>{placeholder}</Text>
          </Text>
        ) : (
          lines.map((line, i) => {
            const start = offset;
            offset += line.length + 1;
            const column =
              editor.cursor >= start && editor.cursor <= start + line.length
                ? editor.cursor - start
                : null;
            return (
              <Box key={i}>
                <Text color="cyan">{i === 0 ? '> ' : '  '}</Text>
                {withCursor(line, column, color)}
              </Box>
            );
          })
        )}
      </Box>
      {suggestions.length ? (
        <Box paddingX={2}>
          <Text dimColor>{suggestions.join('  ')}</Text>
        </Box>
      ) : null}
    </Box>
  );
};

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { capOutput } from '../../../src/workers/tools/output.ts';
import { OutputSink } from '../../../src/workers/tools/output-sink.ts';
import { tempRepo } from './repo.ts';

/** The line count the cut note reports. */
const linesIn = (output: string): number =>
  Number(/The full output \((\d+) lines\)/.exec(output)?.[1]);

/** Streams `chunks` through an OutputSink and returns what it gives the model. */
const sink = async (maxChars: number, chunks: (string | Buffer)[]) => {
  const repo = tempRepo({ maxChars });
  const out = await OutputSink.open(repo.context, 'bash');
  for (const chunk of chunks) out.write(chunk);
  return out.close();
};

describe('cut output: line counts', () => {
  const cases: [string, string, number][] = [
    ['ends in a newline', 'a\nb\nc\n', 3],
    ['ends mid-line', 'a\nb\nc', 3],
    ['has blank lines', 'a\n\n\nb\n', 4],
  ];

  for (const [name, text, lines] of cases) {
    it(`capOutput counts ${lines} lines when the text ${name}`, async () => {
      const repo = tempRepo({ maxChars: 2 });
      const { output, savedTo } = await capOutput(text, repo.context, 'grep');
      expect(linesIn(output)).toBe(lines);
      expect(readFileSync(savedTo!, 'utf8')).toBe(text);
    });

    it(`OutputSink counts ${lines} lines when the output ${name}, as capOutput does`, async () => {
      const { output, savedTo } = await sink(2, [text]);
      expect(linesIn(output)).toBe(lines);
      expect(readFileSync(savedTo!, 'utf8')).toBe(text);
    });
  }

  it('OutputSink counts a line split across chunks once', async () => {
    const { output } = await sink(2, ['ab', 'c\nde', 'f', '\n', 'g']);
    expect(linesIn(output)).toBe(3);
  });

  it('OutputSink counts lines in multi-byte text split mid-character', async () => {
    const bytes = Buffer.from('é\né\n');
    const { output } = await sink(2, [bytes.subarray(0, 1), bytes.subarray(1)]);
    expect(linesIn(output)).toBe(2);
  });

  it('OutputSink keeps short output whole, with no file', async () => {
    expect(await sink(100, ['a\n', 'b\n'])).toEqual({ output: 'a\nb\n' });
  });
});

import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it } from 'vitest';
import { formatTable } from '../../../src/ui/render/output.ts';

describe('formatTable', () => {
  it('pads by visible width, so colored cells line up with plain ones', () => {
    const green = (text: string) => `\u001b[32m${text}\u001b[39m`;
    const table = formatTable(
      ['NAME', 'STATE', 'PID'],
      [
        ['a', green('ready'), '1'],
        ['bb', 'stopped', '-'],
      ],
    );
    expect(stripVTControlCharacters(table)).toBe(
      ['NAME  STATE    PID', 'a     ready    1', 'bb    stopped  -'].join('\n'),
    );
  });
});

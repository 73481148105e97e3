import { describe, expect, it } from 'vitest';
import { MIN_NODE, nodeTooOld } from '../../../src/ui/node-version.ts';

describe('the oldest Node the bin runs on', () => {
  it('is 22.3 (process.getBuiltinModule), by major and minor', () => {
    expect(MIN_NODE).toBe('22.3');
    for (const old of ['20.17.0', '21.7.3', '22.0.0', '22.2.9']) expect(nodeTooOld(old)).toBe(true);
    for (const fine of ['22.3.0', '22.23.3', '23.0.0', '24.1.0', '30.0.0'])
      expect(nodeTooOld(fine)).toBe(false);
  });

  it('the Node running the tests has process.getBuiltinModule, which 22.3 brought', () => {
    expect(nodeTooOld(process.versions.node)).toBe(false);
    expect(typeof process.getBuiltinModule).toBe('function');
  });
});

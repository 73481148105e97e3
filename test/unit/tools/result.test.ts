import { describe, expect, it } from 'vitest';
import { fail } from '../../../src/workers/protocol/tool-result.ts';

describe('fail', () => {
  it('builds a failed result with no output key unless output is given', () => {
    const bare = fail('denied', 'not allowed');
    expect(bare).toEqual({ ok: false, error: { code: 'denied', message: 'not allowed' } });
    expect(Object.keys(bare)).toEqual(['ok', 'error']);
    expect(fail('exec-failed', 'exit 1', 'partial')).toEqual({
      ok: false,
      error: { code: 'exec-failed', message: 'exit 1' },
      output: 'partial',
    });
  });
});

import { describe, expect, it } from 'vitest';
import {
  isStandardSchema,
  resultValidator,
  type ResultCodec,
} from '../../../src/workers/mcp/result-validators.ts';

/** A codec of one era that knows `tools/call` (its results need a `content` array) only. */
const eraCodec = () => {
  const asked: string[] = [];
  const codec: ResultCodec = {
    validateResult(method, raw) {
      asked.push(method);
      if (method !== 'tools/call') return { ok: false, reason: 'not-in-era' };
      const content = (raw as { content?: unknown } | undefined)?.content;
      return Array.isArray(content)
        ? { ok: true, value: raw }
        : { ok: false, reason: 'invalid', message: 'content: expected array' };
    },
  };
  return { codec, asked };
};

describe('result validators made once per codec and method', () => {
  it('validates as the codec does, and probes the era only the first time', () => {
    const { codec, asked } = eraCodec();
    const validator = resultValidator(codec, 'tools/call')!;
    expect(resultValidator(codec, 'tools/call')).toBe(validator);
    expect(asked).toEqual(['tools/call']);
    expect(validator['~standard'].validate({ content: [] })).toEqual({ value: { content: [] } });
    expect(validator['~standard'].validate({ content: 'x' })).toEqual({
      issues: [{ message: 'content: expected array' }],
    });
    expect(asked).toHaveLength(3);
  });

  it('has none for a method the era does not have, and none shared between codecs', () => {
    const one = eraCodec();
    const other = eraCodec();
    expect(resultValidator(one.codec, 'tasks/get')).toBeNull();
    expect(resultValidator(one.codec, 'tasks/get')).toBeNull();
    expect(one.asked).toEqual(['tasks/get']);
    expect(resultValidator(other.codec, 'tools/call')).not.toBe(
      resultValidator(one.codec, 'tools/call'),
    );
  });

  it('tells a schema from request options', () => {
    expect(isStandardSchema(resultValidator(eraCodec().codec, 'tools/call'))).toBe(true);
    expect(isStandardSchema({ timeout: 5 })).toBe(false);
    expect(isStandardSchema(undefined)).toBe(false);
  });
});

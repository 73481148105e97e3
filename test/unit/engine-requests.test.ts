import { describe, expect, it } from 'vitest';
import { applyElicitationDefaults, summarizeSampling } from '../../src/main/engine/requests.ts';

describe('server-request helpers', () => {
  it.each([
    [
      {
        a: { type: 'string', default: 'x' },
        b: { type: 'number', default: 2 },
        c: { type: 'boolean', default: false },
      },
      { a: 'x', b: 2, c: false },
    ],
    [{ a: { type: 'string' } }, {}],
    [{ tags: { type: 'array', default: ['p', 'q'] } }, { tags: ['p', 'q'] }],
    [{ bad: { type: 'object', default: { no: 1 } } }, {}],
  ])('fills defaults %#', (properties, content) => {
    expect(
      applyElicitationDefaults({ message: 'm', requestedSchema: { type: 'object', properties } }),
    ).toEqual(content);
  });

  it('summarizes the last message of a sampling request', () => {
    expect(
      summarizeSampling({
        maxTokens: 1,
        messages: [{ role: 'user', content: { type: 'text', text: 'hello' } }],
      }),
    ).toBe('hello');
    expect(
      summarizeSampling({
        maxTokens: 1,
        messages: [{ role: 'user', content: { type: 'image', data: '', mimeType: 'image/png' } }],
      }),
    ).toBe('(non-text content)');
  });
});

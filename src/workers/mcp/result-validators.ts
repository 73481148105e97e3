import type { StandardSchemaV1 } from '@modelcontextprotocol/client';

/** What of the SDK's per-era wire codec (`Client._wireCodec()`) a result validator needs. */
export interface ResultCodec {
  validateResult(
    method: string,
    raw: unknown,
  ): { ok: true; value: unknown } | { ok: false; reason: string; message?: string };
}

const byCodec = new WeakMap<ResultCodec, Map<string, StandardSchemaV1 | null>>();

/**
 * The validator of `method`'s results on `codec`'s era, made once per codec and method; null when
 * the era has no such method (the SDK then refuses the request, as it would have).
 *
 * The SDK's `request(req, options)` makes the same validator anew for every request, and finds out
 * whether the method is in the era by validating `undefined` against its result schema — a failing
 * zod parse, with its error and message built, per request: a twentieth of the MCP worker's CPU per
 * tool call. Given as the explicit result schema (`request(req, schema, options)`), it goes through
 * the same request path and the same era check, once.
 */
export const resultValidator = (codec: ResultCodec, method: string): StandardSchemaV1 | null => {
  let methods = byCodec.get(codec);
  if (!methods) byCodec.set(codec, (methods = new Map<string, StandardSchemaV1 | null>()));
  let validator = methods.get(method);
  if (validator === undefined) {
    validator = makeValidator(codec, method);
    methods.set(method, validator);
  }
  return validator;
};

const makeValidator = (codec: ResultCodec, method: string): StandardSchemaV1 | null => {
  const probe = codec.validateResult(method, undefined);
  if (!probe.ok && probe.reason === 'not-in-era') return null;
  return {
    '~standard': {
      version: 1,
      vendor: 'niffler',
      validate: (value: unknown) => {
        const outcome = codec.validateResult(method, value);
        if (outcome.ok) return { value: outcome.value };
        const message =
          outcome.reason === 'invalid' ? (outcome.message ?? 'invalid') : `not-in-era: ${method}`;
        return { issues: [{ message }] };
      },
    },
  };
};

/** True for a Standard Schema (the explicit-schema form of `request`), false for options. */
export const isStandardSchema = (value: unknown): value is StandardSchemaV1 =>
  typeof value === 'object' && value !== null && '~standard' in value;

import type { McpElicitationAnswer } from '../../workers/protocol/mcp.ts';

type FieldType = 'string' | 'number' | 'integer' | 'boolean' | 'enum' | 'list';

/** One form field from an elicitation's flat JSON schema; `value` is what the user edits. */
export interface FormField {
  name: string;
  label: string;
  description?: string;
  type: FieldType;
  required: boolean;
  options: string[];
  value: string;
}

type Schema = Record<string, unknown>;

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

const enumOf = (prop: Schema): string[] | undefined => {
  if (Array.isArray(prop['enum'])) return prop['enum'].map(String);
  if (Array.isArray(prop['oneOf']))
    return (prop['oneOf'] as Schema[]).map((o) => scalar(o['const']));
  return undefined;
};

const scalar = (value: unknown): string =>
  typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
    ? String(value)
    : '';

const fieldOf = (name: string, prop: Schema, required: boolean): FormField => {
  const base = {
    name,
    label: str(prop['title']) ?? name,
    ...(str(prop['description']) ? { description: str(prop['description'])! } : {}),
    required,
  };
  const options = enumOf(prop);
  const fallback = prop['default'];
  if (prop['type'] === 'array') {
    const items = (prop['items'] ?? {}) as Schema;
    const values = Array.isArray(fallback) ? fallback.map(String) : [];
    return { ...base, type: 'list', options: enumOf(items) ?? [], value: values.join(', ') };
  }
  if (options)
    return {
      ...base,
      type: 'enum',
      options,
      value: fallback !== undefined ? scalar(fallback) : (options[0] ?? ''),
    };
  const type: FieldType =
    prop['type'] === 'boolean'
      ? 'boolean'
      : prop['type'] === 'number'
        ? 'number'
        : prop['type'] === 'integer'
          ? 'integer'
          : 'string';
  const value = fallback !== undefined ? scalar(fallback) : type === 'boolean' ? 'false' : '';
  return { ...base, type, options: [], value };
};

/** The fields of a requested schema, defaults filled in. */
export const fieldsFromSchema = (schema: Schema): FormField[] => {
  const properties = (schema['properties'] ?? {}) as Record<string, Schema>;
  const required = new Set(Array.isArray(schema['required']) ? schema['required'].map(String) : []);
  return Object.entries(properties).map(([name, prop]) => fieldOf(name, prop, required.has(name)));
};

/** Checks the values and builds the `accept` answer, or names the first field that is wrong. */
export const buildAnswer = (
  fields: FormField[],
): { ok: true; answer: McpElicitationAnswer } | { ok: false; error: string } => {
  const content: Record<string, string | number | boolean | string[]> = {};
  for (const field of fields) {
    const text = field.value.trim();
    if (!text && field.type !== 'boolean') {
      if (field.required) return { ok: false, error: `${field.label} is required` };
      continue;
    }
    switch (field.type) {
      case 'boolean':
        content[field.name] = text === 'true';
        break;
      case 'number':
      case 'integer': {
        const n = Number(text);
        if (!Number.isFinite(n) || (field.type === 'integer' && !Number.isInteger(n)))
          return {
            ok: false,
            error: `${field.label}: expected ${field.type === 'integer' ? 'an integer' : 'a number'}, got "${text}"`,
          };
        content[field.name] = n;
        break;
      }
      case 'list':
        content[field.name] = text
          .split(',')
          .map((t) => t.trim())
          .filter(Boolean);
        break;
      case 'enum':
      case 'string':
        content[field.name] = text;
        break;
    }
  }
  return { ok: true, answer: { action: 'accept', content } };
};

/** The next option of an enum field (or flips a boolean), for ←/→ and space. */
export const cycleValue = (field: FormField, step: 1 | -1): string => {
  if (field.type === 'boolean') return field.value === 'true' ? 'false' : 'true';
  if (field.type !== 'enum' || field.options.length === 0) return field.value;
  const index = field.options.indexOf(field.value);
  return field.options[(index + step + field.options.length) % field.options.length]!;
};

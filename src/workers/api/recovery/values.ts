import type { ToolSpec } from '../../protocol/api.ts';
import { isObject } from '../../shared/is-object.ts';
import type { RawCall } from './types.ts';

// Values as families write them: JSON call objects under the names each family uses, strings
// typed by the tool's schema (the XML-style families write every value as text), and Python
// literals (the pythonic families and Gemma's tool_code).

/** JSON.parse, or undefined. */
export const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
};

/** Arguments given as an object, or as a string holding one (some templates encode them twice). */
const argsOf = (value: unknown): unknown =>
  typeof value === 'string' ? (value.trim() ? parseJson(value) : {}) : value;

/**
 * A call object as the JSON families write it: `name` with `arguments` (Hermes, Mistral, Granite,
 * Phi-4) or `parameters` (Llama 3), `tool_name` with `parameters` (Command R), or OpenAI's
 * `{"function": {"name", "arguments"}}`. Undefined for anything else.
 */
export const callFromObject = (value: unknown): RawCall | undefined => {
  if (!isObject(value)) return undefined;
  const fn = isObject(value['function']) ? value['function'] : undefined;
  const name = value['name'] ?? value['tool_name'] ?? fn?.['name'];
  if (typeof name !== 'string' || !name) return undefined;
  const keys = Object.keys(value);
  const allowed = ['name', 'tool_name', 'arguments', 'parameters', 'function', 'id', 'type'];
  if (keys.some((k) => !allowed.includes(k) && k !== 'tool_call_id')) return undefined;
  const args = value['arguments'] ?? value['parameters'] ?? fn?.['arguments'];
  // A call names its arguments, `{}` when it has none (vLLM's and llama.cpp's parsers agree).
  return args === undefined ? undefined : { name, args: argsOf(args) };
};

/** Calls from JSON text holding one call object or an array of them; undefined unless all are. */
export const callsFromJson = (text: string): RawCall[] | undefined => {
  const value = parseJson(text.trim());
  const items = Array.isArray(value) ? value : [value];
  const calls = items.map(callFromObject);
  return calls.length > 0 && calls.every((c) => c !== undefined) ? calls : undefined;
};

/** The JSON-schema types a tool gives parameter `name` (`anyOf` members included). */
const typesOf = (tool: ToolSpec | undefined, name: string): string[] => {
  const properties = tool?.inputSchema['properties'];
  const prop = isObject(properties) ? properties[name] : undefined;
  if (!isObject(prop)) return [];
  const own = prop['type'];
  const types = typeof own === 'string' ? [own] : Array.isArray(own) ? own.map(String) : [];
  for (const member of [prop['anyOf'], prop['oneOf']].flat())
    if (isObject(member) && typeof member['type'] === 'string') types.push(member['type']);
  return types;
};

const numberOf = (raw: string, integer: boolean): number | undefined => {
  if (!/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(raw)) return undefined;
  const n = Number(raw);
  return Number.isFinite(n) && (!integer || Number.isInteger(n)) ? n : undefined;
};

/**
 * A parameter written as text, typed by the tool's schema as llama.cpp and Ollama do: one leading
 * and one trailing newline dropped; `null`; booleans, integers, numbers, arrays and objects when
 * the schema says so and the text reads as one; else the text. Without a schema, JSON that is not
 * a bare word is read as JSON.
 */
export const typedValue = (tool: ToolSpec | undefined, name: string, text: string): unknown => {
  const raw = text.replace(/^\r?\n/, '').replace(/\r?\n$/, '');
  const types = typesOf(tool, name);
  if (types.length === 0) {
    if (raw.trim().toLowerCase() === 'null') return null;
    return /^\s*[[{"]/.test(raw) ? (parseJson(raw) ?? raw) : raw;
  }
  if (raw.trim().toLowerCase() === 'null' && !types.includes('string')) return null;
  const trimmed = raw.trim();
  for (const type of ['boolean', 'integer', 'number', 'array', 'object']) {
    if (!types.includes(type)) continue;
    if (type === 'boolean' && /^(true|false)$/i.test(trimmed))
      return trimmed.toLowerCase() === 'true';
    if (type === 'integer' || type === 'number') {
      const n = numberOf(trimmed, type === 'integer');
      if (n !== undefined) return n;
    }
    if (type === 'array' || type === 'object') {
      const parsed = parseJson(trimmed);
      if (type === 'array' ? Array.isArray(parsed) : isObject(parsed)) return parsed;
    }
  }
  return raw;
};

/** A reader of Python literals and calls: `name(a='x', b=[1, 2], c=None)`. */
class PythonReader {
  i = 0;
  constructor(readonly text: string) {}

  fail(): never {
    throw new SyntaxError(`unexpected input at ${this.i}`);
  }
  space(): void {
    while (/\s/.test(this.text[this.i] ?? '')) this.i++;
  }
  eat(c: string): boolean {
    this.space();
    if (this.text[this.i] !== c) return false;
    this.i++;
    return true;
  }
  name(): string {
    this.space();
    const m = /^[A-Za-z_][\w.-]*/.exec(this.text.slice(this.i, this.i + 256));
    if (!m) this.fail();
    this.i += m[0].length;
    return m[0];
  }
  string(): string {
    const quote = this.text[this.i]!;
    let out = '';
    for (this.i++; this.i < this.text.length; this.i++) {
      const c = this.text[this.i]!;
      if (c === quote) {
        this.i++;
        return out;
      }
      if (c !== '\\') out += c;
      else {
        const next = this.text[++this.i] ?? '';
        out += { n: '\n', t: '\t', r: '\r', '\\': '\\', "'": "'", '"': '"' }[next] ?? `\\${next}`;
      }
    }
    return this.fail();
  }
  sequence(close: string): unknown[] {
    const items: unknown[] = [];
    while (!this.eat(close)) {
      items.push(this.value());
      if (!this.eat(',') && this.text[this.i] !== close) this.fail();
    }
    return items;
  }
  dict(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    while (!this.eat('}')) {
      const key = this.value();
      if (!this.eat(':')) this.fail();
      out[String(key)] = this.value();
      if (!this.eat(',') && this.text[this.i] !== '}') this.fail();
    }
    return out;
  }
  value(): unknown {
    this.space();
    const c = this.text[this.i];
    if (c === "'" || c === '"') return this.string();
    if (c === '[') return (this.i++, this.sequence(']'));
    if (c === '(') return (this.i++, this.sequence(')'));
    if (c === '{') return (this.i++, this.dict());
    const m = /^-?\d+(\.\d+)?([eE][-+]?\d+)?/.exec(this.text.slice(this.i, this.i + 64));
    if (m) return ((this.i += m[0].length), Number(m[0]));
    const word = this.name();
    const known: Record<string, unknown> = { True: true, False: false, None: null };
    if (word in known) return known[word];
    if (['true', 'false', 'null'].includes(word)) return JSON.parse(word) as unknown;
    return this.fail();
  }
  /** `name(kw=value, …)`, the name as written (dots included). */
  call(): { name: string; args: Record<string, unknown> } {
    const name = this.name();
    if (!this.eat('(')) this.fail();
    const args: Record<string, unknown> = {};
    while (!this.eat(')')) {
      const key = this.name();
      if (!this.eat('=')) this.fail();
      args[key] = this.value();
      if (!this.eat(',') && this.text[this.i] !== ')') this.fail();
    }
    return { name, args };
  }
}

/** `[a(x=1), b()]` (or one call without brackets) as calls; undefined when it is not exactly that. */
export const pythonCalls = (text: string, bracketed: boolean): RawCall[] | undefined => {
  const reader = new PythonReader(text);
  try {
    const calls: RawCall[] = [];
    if (bracketed && !reader.eat('[')) return undefined;
    do calls.push(reader.call());
    while (reader.eat(','));
    if (bracketed && !reader.eat(']')) return undefined;
    reader.space();
    return reader.i === text.length ? calls : undefined;
  } catch {
    return undefined;
  }
};

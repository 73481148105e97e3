import { createHash } from 'node:crypto';

/** What a model-facing tool name must match (OpenAI, Anthropic and Gemini all accept it). */
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

const MAX = 64;
const SEPARATOR = '__';

interface ToolRef {
  server: string;
  tool: string;
}

/** Both directions of the `server__tool` table. */
export interface NameTable {
  toModel: Map<string, string>;
  fromModel: Map<string, ToolRef>;
}

const sanitize = (text: string): string => text.replace(/[^a-zA-Z0-9_-]/g, '_') || '_';

const hash = (text: string, length: number): string =>
  createHash('sha256').update(text).digest('hex').slice(0, length);

const key = (ref: ToolRef): string => `${ref.server}\u0000${ref.tool}`;

/** `prefix` cut so that `prefix_<hash>` fits in 64 characters; the hash is of the real names. */
const withSuffix = (base: string, ref: ToolRef, length: number): string =>
  `${base.slice(0, MAX - length - 1)}_${hash(key(ref), length)}`;

/**
 * Assigns model-facing names `server__tool` to every tool: characters outside `[a-zA-Z0-9_-]`
 * become `_`; a name over 64 characters, or one shared by two tools after sanitizing, gets a
 * stable hash suffix of the original server and tool names. The result depends only on the set
 * of tools, not on their order.
 */
export const assignToolNames = (refs: readonly ToolRef[]): NameTable => {
  const sorted = [...refs].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  const bases = sorted.map((ref) => `${sanitize(ref.server)}${SEPARATOR}${sanitize(ref.tool)}`);
  const counts = new Map<string, number>();
  for (const base of bases) counts.set(base, (counts.get(base) ?? 0) + 1);

  const toModel = new Map<string, string>();
  const fromModel = new Map<string, ToolRef>();
  // Plain names first, so a hashed name can never take a plain one's place.
  const plain = sorted.filter((_, i) => bases[i]!.length <= MAX && counts.get(bases[i]!) === 1);
  for (const ref of plain) {
    const name = `${sanitize(ref.server)}${SEPARATOR}${sanitize(ref.tool)}`;
    toModel.set(key(ref), name);
    fromModel.set(name, ref);
  }
  sorted.forEach((ref, i) => {
    if (toModel.has(key(ref))) return;
    let length = 8;
    let name = withSuffix(bases[i]!, ref, length);
    while (fromModel.has(name) && length < 40) name = withSuffix(bases[i]!, ref, (length += 4));
    toModel.set(key(ref), name);
    fromModel.set(name, ref);
  });
  return { toModel, fromModel };
};

/** The model-facing name of one tool in a table built by `assignToolNames`. */
export const modelName = (table: NameTable, ref: ToolRef): string | undefined =>
  table.toModel.get(key(ref));

import type { ToolSpec } from '../../../workers/protocol/api.ts';
import type { SearchableTool } from '../../calls/types.ts';

// Deferred tool loading: with many MCP tools, their schemas crowd out the conversation and small
// models choose worse. Deferred tools are named in one line each (or per server, when even that
// is too much) in the description of a `tool_search` tool, which finds them by BM25 over their
// names, descriptions and parameter names and returns their full schemas; those join the request
// for the rest of the turn.

export type { SearchableTool } from '../../calls/types.ts';

export const TOOL_SEARCH = 'tool_search';

/** `auto` defers MCP tools once their schemas pass this share of the context window. */
const AUTO_SHARE = 0.1;
/**
 * …or once all the definitions a request carries (built-ins and niffler's own tools too) pass
 * this share, as on a small window; and if what is left still passes it, the built-ins a coding
 * turn can do without wait too.
 */
const TOOLS_SHARE = 0.15;
/** Built-ins deferred when the window is too small for all of them: others do their work too. */
const OPTIONAL_BUILTINS: ReadonlySet<string> = new Set(['list_dir', 'path_info', 'fetch', 'todo']);
/** The index of deferred tools, one line each, may take this share before it goes per server. */
const INDEX_SHARE = 0.05;

/** Tokens of a piece of text, as estimated everywhere in niffler (4 characters a token). */
const tokensOf = (text: string): number => Math.ceil(text.length / 4);

export const schemaTokens = (tools: readonly SearchableTool[]): number =>
  tokensOf(JSON.stringify(tools.map((t) => t.spec)));

export interface ToolPlan {
  /** The tools sent whole. */
  offered: ToolSpec[];
  /** Deferred tools, reachable through `tool_search` (empty: nothing deferred). */
  deferred: SearchableTool[];
}

interface PlanOptions {
  mode: 'auto' | 'always' | 'never';
  /** The model's context window, in tokens. */
  window: number;
  /** Servers whose tools are always sent whole (`mcpServers.X.alwaysLoad`). */
  alwaysLoad: ReadonlySet<string>;
  /** Tools found by `tool_search` earlier in this turn: sent whole from now on. */
  loaded: ReadonlySet<string>;
  /** Tokens of the definitions sent whole besides `tools` (the task tool, repository tools). */
  alsoSent?: number;
}

const firstLine = (text: string): string => {
  const line = (text.split('\n')[0] ?? '').trim();
  return line.length > 100 ? `${line.slice(0, 97)}...` : line;
};

/** The `tool_search` tool, its description listing what it can find. */
const searchSpec = (deferred: readonly SearchableTool[], window: number): ToolSpec => {
  const lines = deferred.map((t) => `- ${t.spec.name}: ${firstLine(t.spec.description)}`);
  let index = lines.join('\n');
  if (tokensOf(index) > window * INDEX_SHARE) {
    const servers = new Map<string, number>();
    for (const t of deferred) if (t.server) servers.set(t.server, (servers.get(t.server) ?? 0) + 1);
    const builtins = deferred.filter((t) => !t.server).map((t) => t.spec.name);
    index = [
      ...(builtins.length ? [`- built-in: ${builtins.join(', ')}`] : []),
      ...[...servers].map(([server, n]) => `- ${server}__*: ${n} tools of the ${server} server`),
    ].join('\n');
  }
  return {
    name: TOOL_SEARCH,
    description:
      'Find tools that are not loaded yet and load them: returns the full definitions of the best matches, ' +
      'which you can then call by name (and the skills that match, if any). Search by what you want to do, or by a tool name. Tools you can find:\n' +
      index,
    inputSchema: {
      type: 'object',
      properties: {
        query: { type: 'string', description: 'what the tool should do, or its name' },
        limit: {
          type: 'integer',
          minimum: 1,
          maximum: 10,
          description: 'how many to load (default 8)',
        },
      },
      required: ['query'],
    },
  };
};

/**
 * Which tools a request carries whole and which wait behind `tool_search`. `never` sends all;
 * `always` defers every MCP tool not exempt; `auto` defers them once their schemas pass
 * `AUTO_SHARE` of the window, or all the definitions `TOOLS_SHARE`. Either way, when what is left
 * still passes `TOOLS_SHARE`, the optional built-ins wait too.
 */
export const planTools = (tools: readonly SearchableTool[], options: PlanOptions): ToolPlan => {
  if (options.mode === 'never') return { offered: tools.map((t) => t.spec), deferred: [] };
  const share = options.window * TOOLS_SHARE;
  const free = (t: SearchableTool) => !options.loaded.has(t.spec.name);
  const all = schemaTokens(tools) + (options.alsoSent ?? 0);
  const mcpTokens = schemaTokens(tools.filter((t) => t.kind === 'mcp'));
  const mcp =
    options.mode === 'always' || mcpTokens > options.window * AUTO_SHARE || all > share
      ? tools.filter(
          (t) => t.kind === 'mcp' && free(t) && !(t.server && options.alwaysLoad.has(t.server)),
        )
      : [];
  const optional = tools.filter(
    (t) => t.kind === 'builtin' && free(t) && OPTIONAL_BUILTINS.has(t.spec.name),
  );
  const left =
    all -
    schemaTokens(mcp) +
    (mcp.length ? tokensOf(JSON.stringify(searchSpec(mcp, options.window))) : 0);
  const candidates = left > share ? [...mcp, ...optional] : mcp;
  if (candidates.length === 0) return { offered: tools.map((t) => t.spec), deferred: [] };
  const deferred = new Set(candidates);
  return {
    offered: [
      ...tools.filter((t) => !deferred.has(t)).map((t) => t.spec),
      searchSpec(candidates, options.window),
    ],
    deferred: candidates,
  };
};

/** Words of a name or text: `create_github-Issue` → create, github, issue. */
const words = (text: string): string[] =>
  text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 1 && !STOP.has(w));

const STOP = new Set(
  'the a an of to and or in on for with is it by this that from as be are at my me i we our you your so do does did can could would should will what which who when where how there here into onto about please use using some any all'.split(
    ' ',
  ),
);

/**
 * Words developers use for what tools name otherwise: a query term also looks for these (its
 * own matches count more). General vocabulary of the trade, not any server's.
 */
const SYNONYMS: Record<string, string[]> = {
  pr: ['pull', 'request'],
  prs: ['pull', 'request'],
  mr: ['merge', 'request'],
  dm: ['direct', 'message'],
  ticket: ['issue'],
  bug: ['issue'],
  folder: ['directory'],
  dir: ['directory'],
  mkdir: ['create', 'directory'],
  ls: ['list', 'directory'],
  repo: ['repository'],
  k8s: ['kubernetes'],
  db: ['database'],
  email: ['mail', 'message', 'gmail'],
  emails: ['mail', 'message', 'gmail'],
  mail: ['message', 'gmail'],
  meeting: ['event', 'calendar'],
  meetings: ['event', 'calendar'],
  schedule: ['event', 'calendar'],
  free: ['freebusy', 'availability'],
  busy: ['freebusy', 'availability'],
  comment: ['note', 'reply'],
  reply: ['comment', 'note'],
  react: ['reaction', 'emoji'],
  emoji: ['reaction'],
  rollback: ['roll', 'back', 'revert'],
  revert: ['rollback'],
  deploy: ['release', 'rollout'],
  remember: ['memory', 'observation', 'entity'],
  fact: ['observation'],
  table: ['object', 'schema'],
  tables: ['object', 'schema'],
  bucket: ['s3', 'object'],
  log: ['logs'],
  logs: ['log'],
  image: ['media', 'picture', 'png'],
  picture: ['image', 'media'],
  open: ['navigate', 'create'],
  browse: ['navigate'],
  url: ['navigate', 'page'],
  page: ['browser'],
  move: ['transition', 'rename'],
  status: ['transition', 'state'],
  package: ['npm', 'dependency'],
  library: ['package'],
  run: ['exec', 'execute'],
  shell: ['exec', 'command'],
  command: ['exec'],
  delete: ['remove'],
  remove: ['delete'],
  add: ['create'],
  make: ['create'],
  new: ['create'],
  find: ['search'],
  lookup: ['search'],
  look: ['search', 'read', 'get'],
  read: ['get', 'contents'],
  show: ['get', 'list', 'read'],
  sum: ['add'],
  compare: ['diff', 'difference'],
  differ: ['diff'],
  differs: ['diff'],
  difference: ['diff'],
  changes: ['diff'],
  record: ['create', 'add', 'save'],
  save: ['write', 'create'],
  several: ['multiple'],
  many: ['multiple'],
  once: ['multiple', 'batch'],
  files: ['multiple'],
  everything: ['all'],
  every: ['all'],
};

/**
 * The words of a query worth searching with: file paths, URLs and names with an extension
 * (`src/a/forms`, `package.json`) say what to act on, not which tool acts; they are left out.
 */
const queryTerms = (query: string): string[] =>
  terms(
    query
      .split(/\s+/)
      .filter((word) => !/[/\\]|^\W*[\w-]+\.[a-z0-9]{1,5}\W*$|:\/\//i.test(word))
      .join(' '),
  );

/** A word and its stem (plural and common endings off), both indexed, so `issues` finds `issue`. */
const terms = (text: string): string[] =>
  words(text).flatMap((w) => {
    const stem = w.replace(/(ies|es|s|ing|ed)$/, (end) => (end === 'ies' ? 'y' : '')) || w;
    return stem !== w && stem.length > 2 ? [w, stem] : [w];
  });

const parameterNames = (schema: Record<string, unknown>): string => {
  const properties = schema['properties'];
  return properties && typeof properties === 'object' ? Object.keys(properties).join(' ') : '';
};

/** Each tool as a weighted bag of terms: its name counts thrice, its parameters once. */
const document = (tool: SearchableTool): string[] => {
  const bare = tool.spec.name.split('__').slice(1).join(' ') || tool.spec.name;
  return [
    ...terms(bare),
    ...terms(bare),
    ...terms(tool.spec.name),
    ...terms(tool.spec.description),
    ...terms(parameterNames(tool.spec.inputSchema)),
  ];
};

/**
 * The deferred tools that best match `query`: an exact name (with or without its `server__`)
 * first, then by BM25 (k1 1.2, b 0.75) over names, descriptions and parameter names.
 */
export const searchTools = (
  deferred: readonly SearchableTool[],
  query: string,
  limit = 8,
): SearchableTool[] => {
  const q = query.trim().toLowerCase();
  const exact = deferred.filter(
    (t) =>
      t.spec.name.toLowerCase() === q ||
      t.spec.name.toLowerCase().split('__').slice(1).join('__') === q,
  );
  const docs = deferred.map((tool) => ({ tool, terms: document(tool) }));
  const average = docs.reduce((sum, d) => sum + d.terms.length, 0) / Math.max(1, docs.length);
  const df = new Map<string, number>();
  for (const d of docs) for (const term of new Set(d.terms)) df.set(term, (df.get(term) ?? 0) + 1);
  const own = [...new Set(queryTerms(query))];
  const related = own.flatMap((term) => SYNONYMS[term] ?? []).filter((t) => !own.includes(t));
  const wanted: [string, number][] = [
    ...own.map((t): [string, number] => [t, 1]),
    ...[...new Set(related)].map((t): [string, number] => [t, 0.5]),
  ];
  const scored = docs
    .map(({ tool, terms: doc }) => {
      let score = 0;
      for (const [term, weight] of wanted) {
        const tf = doc.filter((t) => t === term).length;
        if (!tf) continue;
        const n = df.get(term) ?? 0;
        const idf = Math.log(1 + (docs.length - n + 0.5) / (n + 0.5));
        score += (weight * idf * tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * doc.length) / average));
      }
      return { tool, score };
    })
    .filter((s) => s.score > 0 && !exact.includes(s.tool))
    .sort((a, b) => b.score - a.score);
  return [...exact, ...scored.map((s) => s.tool)].slice(0, limit);
};

/**
 * What `tool_search` answers: the found tools' full definitions and the skills found (to activate
 * with the `skill` tool), or how to search better.
 */
export const searchResultText = (found: readonly SearchableTool[], query: string): string => {
  const tools = found.filter((t) => t.kind !== 'skill');
  const skills = found.filter((t) => t.kind === 'skill');
  if (found.length === 0)
    return `No tool matches "${query}". Search with other words (what the tool does, or a server's name).`;
  return [
    ...(tools.length
      ? [
          `Loaded ${tools.length} tool(s); call them by name:\n` +
            JSON.stringify(
              tools.map((t) => ({
                name: t.spec.name,
                description: t.spec.description,
                parameters: t.spec.inputSchema,
              })),
              null,
              1,
            ),
        ]
      : []),
    ...(skills.length
      ? [
          `Skills that match (activate one with the skill tool, {"name": …}, for its instructions):\n` +
            skills.map((t) => `- ${t.spec.name}: ${t.spec.description}`).join('\n'),
        ]
      : []),
  ].join('\n\n');
};

import {
  DefinitionRequest,
  DocumentSymbolRequest,
  HoverRequest,
  ReferencesRequest,
  WorkspaceSymbolRequest,
  type Definition,
  type DefinitionLink,
  type DocumentSymbol,
  type Hover,
  type Location,
  type Position,
  type SymbolInformation,
  type WorkspaceSymbol,
} from 'vscode-languageserver-protocol/node';
import { NifflerError } from '../protocol/wire-error.ts';
import type { LspQuery } from '../protocol/lsp.ts';
import { fromUri, isWorkspaceFile, shown, type Place } from './files.ts';
import type { OpenDocument } from './documents.ts';
import type { LanguageServer } from './server.ts';

// The `lsp` tool's questions, asked of the server that serves the file (or every running one, for
// a symbol by name), and answered in compact text: `file:line:column  the line`, an outline, the
// hover text. Nothing outside the workspace is read, and places there are named, not shown.

const MAX_LOCATIONS = 100;
const MAX_OUTLINE = 300;
const MAX_HOVER = 3000;
const MAX_LINE = 160;

const SYMBOL_KINDS = [
  'file',
  'module',
  'namespace',
  'package',
  'class',
  'method',
  'property',
  'field',
  'constructor',
  'enum',
  'interface',
  'function',
  'variable',
  'constant',
  'string',
  'number',
  'boolean',
  'array',
  'object',
  'key',
  'null',
  'enum member',
  'struct',
  'event',
  'operator',
  'type parameter',
];
const kindName = (kind: number): string => SYMBOL_KINDS[kind - 1] ?? 'symbol';

/** What answering needs of the manager: servers, opened files, the workspace. */
export interface Navigator {
  place: Place;
  deadline: number;
  /** The server of `file` (started when it was not), ready by the deadline, or an error. */
  serverOf(file: string): Promise<LanguageServer>;
  /** `file` open in its server with its text as on disk now. */
  open(server: LanguageServer, file: string): Promise<OpenDocument>;
  /** The servers that run now. */
  running(): LanguageServer[];
  /** The text of a workspace file (an open document's, or read), for the lines of answers. */
  textOf(file: string): Promise<string | undefined>;
}

const usage = (message: string) => new NifflerError('usage', message);

/** A place in a file, 1-based, as the model gives it and reads it. */
interface Target {
  server: LanguageServer;
  doc: OpenDocument;
  position: Position;
  /** How the target was found, when by name (which of several). */
  found?: string;
}

/** The line and column the model gave, checked against the file. */
const positionIn = (doc: OpenDocument, line: number, column: number, place: Place): Position => {
  const lines = doc.text.split('\n');
  if (!Number.isInteger(line) || line < 1 || line > lines.length)
    throw usage(
      `${shown(doc.file, place)} has ${lines.length} lines; line ${line} is not one of them`,
    );
  if (!Number.isInteger(column) || column < 1)
    throw usage('column is 1-based: the first character of a line is column 1');
  return { line: line - 1, character: Math.min(column - 1, lines[line - 1]!.length) };
};

/** The place a question is about: a file's line and column, or a symbol's declaration. */
const targetOf = async (nav: Navigator, query: LspQuery): Promise<Target> => {
  if (query.file && query.line !== undefined) {
    const server = await nav.serverOf(query.file);
    const doc = await nav.open(server, query.file);
    return { server, doc, position: positionIn(doc, query.line, query.column ?? 1, nav.place) };
  }
  if (!query.symbol)
    throw usage(`${query.operation} needs a file with a line (and column), or a symbol name`);
  const found = await findSymbol(nav, query.symbol, query.file);
  const doc = await nav.open(found.server, found.file);
  return {
    server: found.server,
    doc,
    position: found.position,
    ...(found.note ? { found: found.note } : {}),
  };
};

interface FoundSymbol {
  server: LanguageServer;
  file: string;
  position: Position;
  note?: string;
}

/** `name` matches a symbol called so, or `Container.name` one in that container. */
const matchesName = (name: string, symbol: string, container?: string): boolean => {
  if (name === symbol) return true;
  const dot = name.lastIndexOf('.');
  return dot > 0 && name.slice(dot + 1) === symbol && name.slice(0, dot) === container;
};

/** A symbol's declaration by name: in `file` when given, else among the workspace's. */
const findSymbol = async (nav: Navigator, name: string, file?: string): Promise<FoundSymbol> => {
  if (file) {
    const server = await nav.serverOf(file);
    const doc = await nav.open(server, file);
    const symbols = await documentSymbols(server, doc, nav.deadline);
    const hits = flatten(symbols).filter((s) => matchesName(name, s.name, s.container));
    if (!hits.length)
      throw usage(
        `no symbol named ${name} in ${shown(file, nav.place)}; lsp symbols with this file lists them`,
      );
    return {
      server,
      file,
      position: hits[0]!.position,
      ...(hits.length > 1 ? { note: `${hits.length} symbols named ${name}; the first` } : {}),
    };
  }
  const hits: FoundSymbol[] = [];
  for (const server of nav.running()) {
    const symbols = (await workspaceSymbols(server, name.split('.').at(-1)!, nav.deadline)) ?? [];
    for (const s of symbols) {
      const at = 'range' in s.location ? s.location : undefined;
      const target = at ? fromUri(at.uri) : undefined;
      if (!at || !target || !isWorkspaceFile(target, nav.place)) continue;
      if (matchesName(name, s.name, s.containerName))
        hits.push({ server, file: target, position: at.range.start });
    }
  }
  if (!hits.length)
    throw usage(
      `no symbol named ${name} in the workspace (as far as its language servers know); give a file and line instead`,
    );
  const first = hits[0]!;
  return hits.length > 1
    ? {
        ...first,
        note: `${hits.length} symbols named ${name}; the first, in ${shown(first.file, nav.place)} (give file to choose)`,
      }
    : first;
};

const documentSymbols = async (server: LanguageServer, doc: OpenDocument, deadline: number) =>
  (await server.ask(
    (conn, token) =>
      conn.sendRequest(DocumentSymbolRequest.type, { textDocument: { uri: doc.uri } }, token),
    deadline,
    'a symbols request',
  )) ?? [];

const workspaceSymbols = (server: LanguageServer, query: string, deadline: number) =>
  server.ask(
    (conn, token) =>
      conn.sendRequest(WorkspaceSymbolRequest.type, { query }, token) as Promise<
        (SymbolInformation | WorkspaceSymbol)[] | null
      >,
    deadline,
    'a workspace symbols request',
  );

/** Document symbols, nested or flat, as one list with their containers and depth. */
const flatten = (symbols: (DocumentSymbol | SymbolInformation)[], container?: string, depth = 0) =>
  symbols.flatMap(
    (
      s,
    ): { name: string; kind: number; container?: string; depth: number; position: Position }[] => {
      if ('location' in s)
        return [
          {
            name: s.name,
            kind: s.kind,
            ...(s.containerName ? { container: s.containerName } : {}),
            depth: 0,
            position: s.location.range.start,
          },
        ];
      return [
        {
          name: s.name,
          kind: s.kind,
          ...(container ? { container } : {}),
          depth,
          position: s.selectionRange.start,
        },
        ...flatten(s.children ?? [], s.name, depth + 1),
      ];
    },
  );

/** `file:line:column  the line's text`, or the place alone outside the workspace. */
const locationLine = async (nav: Navigator, location: Location): Promise<string> => {
  const file = fromUri(location.uri);
  const { line, character } = location.range.start;
  if (!file) return `${location.uri}:${line + 1}:${character + 1}`;
  const place = `${shown(file, nav.place)}:${line + 1}:${character + 1}`;
  if (!isWorkspaceFile(file, nav.place)) return place;
  const text = (await nav.textOf(file))?.split('\n')[line]?.trim();
  return text
    ? `${place}  ${text.length > MAX_LINE ? `${text.slice(0, MAX_LINE - 1)}…` : text}`
    : place;
};

const asLocations = (
  found: Definition | DefinitionLink[] | Location[] | null | undefined,
): Location[] => {
  if (!found) return [];
  const list = Array.isArray(found) ? found : [found];
  return list.map((l) =>
    'targetUri' in l ? { uri: l.targetUri, range: l.targetSelectionRange } : l,
  );
};

const listLocations = async (nav: Navigator, locations: Location[]): Promise<string[]> => {
  const lines = await Promise.all(
    locations.slice(0, MAX_LOCATIONS).map((l) => locationLine(nav, l)),
  );
  return locations.length > MAX_LOCATIONS
    ? [...lines, `(+${locations.length - MAX_LOCATIONS} more)`]
    : lines;
};

/** Hover contents as plain text: markdown's code fences dropped, cut to a size. */
const hoverText = (hover: Hover | null | undefined): string => {
  if (!hover) return '';
  const parts = Array.isArray(hover.contents) ? hover.contents : [hover.contents];
  const text = parts
    .map((p) => (typeof p === 'string' ? p : p.value))
    .join('\n')
    .replace(/^```\w*\n?|```$/gm, '')
    .trim();
  return text.length > MAX_HOVER ? `${text.slice(0, MAX_HOVER - 1)}…` : text;
};

const noAnswer = (server: LanguageServer) =>
  new NifflerError(
    'timeout',
    `${server.spec.name} did not answer in time; try again (niffler lsp status shows how it is)`,
  );

/** Definition, references or hover at a place (given, or a symbol's). */
const atPosition = async (nav: Navigator, query: LspQuery): Promise<string> => {
  const target = await targetOf(nav, query);
  const { server, doc, position } = target;
  const params = { textDocument: { uri: doc.uri }, position };
  const where = `${shown(doc.file, nav.place)}:${position.line + 1}:${position.character + 1}`;
  const head = target.found ? [`(${target.found}: ${where})`] : [];
  if (query.operation === 'hover') {
    const hover = await server.ask(
      (conn, token) => conn.sendRequest(HoverRequest.type, params, token),
      nav.deadline,
      'a hover request',
    );
    if (hover === undefined) throw noAnswer(server);
    return [...head, hoverText(hover) || `nothing to show at ${where}`].join('\n');
  }
  if (query.operation === 'definition') {
    const found = await server.ask(
      (conn, token) => conn.sendRequest(DefinitionRequest.type, params, token),
      nav.deadline,
      'a definition request',
    );
    if (found === undefined) throw noAnswer(server);
    const locations = asLocations(found);
    return [
      ...head,
      ...(locations.length
        ? await listLocations(nav, locations)
        : [`no definition found at ${where}`]),
    ].join('\n');
  }
  const refs = await server.ask(
    (conn, token) =>
      conn.sendRequest(
        ReferencesRequest.type,
        { ...params, context: { includeDeclaration: true } },
        token,
      ),
    nav.deadline,
    'a references request',
  );
  if (refs === undefined) throw noAnswer(server);
  const files = new Set((refs ?? []).map((r) => r.uri)).size;
  const count = refs?.length ?? 0;
  return [
    ...head,
    count
      ? `${count} reference${count === 1 ? '' : 's'} in ${files} file${files === 1 ? '' : 's'}:`
      : `no references found at ${where}`,
    ...(await listLocations(nav, refs ?? [])),
  ].join('\n');
};

/** A file's outline, or the workspace's symbols matching a query. */
const symbolsOf = async (nav: Navigator, query: LspQuery): Promise<string> => {
  if (query.file) {
    const server = await nav.serverOf(query.file);
    const doc = await nav.open(server, query.file);
    const symbols = flatten(await documentSymbols(server, doc, nav.deadline));
    if (!symbols.length) return `no symbols in ${shown(doc.file, nav.place)}`;
    const lines = symbols
      .slice(0, MAX_OUTLINE)
      .map(
        (s) =>
          `${'  '.repeat(s.depth)}${kindName(s.kind)} ${s.name}  ${s.position.line + 1}:${s.position.character + 1}`,
      );
    return [
      ...lines,
      ...(symbols.length > MAX_OUTLINE ? [`(+${symbols.length - MAX_OUTLINE} more)`] : []),
    ].join('\n');
  }
  const wanted = query.query ?? query.symbol;
  if (!wanted)
    throw usage(
      "symbols needs a file (its outline) or a query (the workspace's symbols matching it)",
    );
  const lines: string[] = [];
  let outside = 0;
  for (const server of nav.running())
    for (const s of (await workspaceSymbols(server, wanted, nav.deadline)) ?? []) {
      const file = fromUri(s.location.uri);
      if (!file || !isWorkspaceFile(file, nav.place)) {
        outside++;
        continue;
      }
      const start = 'range' in s.location ? s.location.range.start : undefined;
      lines.push(
        `${kindName(s.kind)} ${s.containerName ? `${s.containerName}.` : ''}${s.name}  ${shown(file, nav.place)}${start ? `:${start.line + 1}:${start.character + 1}` : ''}`,
      );
    }
  if (!lines.length)
    return `no symbols matching ${wanted} in the workspace${outside ? ` (${outside} outside it left out)` : ''}`;
  return [
    ...lines.slice(0, MAX_LOCATIONS),
    ...(lines.length > MAX_LOCATIONS ? [`(+${lines.length - MAX_LOCATIONS} more)`] : []),
  ].join('\n');
};

/** Answers a question of the `lsp` tool other than diagnostics (the manager answers those). */
export const answer = (nav: Navigator, query: LspQuery): Promise<string> =>
  query.operation === 'symbols' ? symbolsOf(nav, query) : atPosition(nav, query);

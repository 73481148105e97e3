// The house in numbers: function lengths, file sizes, import cycles, imports that point up the
// layers of src/main, and exports nobody imports. Fails (exit 1) on a runtime import cycle — one
// made of static imports that load code, as opposed to `import type` or lazy `import()` — since
// those make module start-up order matter, and on any figure past its ceiling in LIMITS below.
// Run by `npm run lint` (and `npm run house`). `--json` prints the figures for the closing notes
// of a change.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const rootArg = process.argv.indexOf('--root');
const root =
  rootArg > 0 ? path.resolve(process.argv[rootArg + 1]) : path.resolve(import.meta.dirname, '..');
const LONG = 60;
const BIG = 400;

// The ratchet, in one place. `goal` is where the house should be (issue 32); `ceiling` is the
// most a change may leave: the goal where it is met, today's figure where it is not, so nothing
// gets worse. When a change brings a figure down, lower its ceiling to match in the same commit;
// never raise one. (Raised once, when the ratchet met the wave-3 branches written before it:
// search, cold start, skills and peer files landed after it with 4 long functions, 5 big files,
// 3 upward imports and 42 unused exports of their own; the engine room's split brings them down.)
const LIMITS = {
  runtimeCycles: { goal: 0, ceiling: 0, what: 'runtime import cycles' },
  typeOnlyCycles: { goal: 0, ceiling: 0, what: 'import cycles closed by a type-only import' },
  longFunctions: { goal: 0, ceiling: 0, what: `functions over ${LONG} lines` },
  bigFiles: { goal: 0, ceiling: 0, what: `files in src/ over ${BIG} lines (exceptions apart)` },
  upwardImports: {
    goal: 0,
    ceiling: 0,
    what: 'modules of src/main importing a folder above their layer',
  },
  unusedExports: { goal: 0, ceiling: 0, what: 'exports nothing imports' },
};

// Files allowed over BIG lines: tables and declarations, read by looking a name up, not top to
// bottom. Anything else that long has more than one job.
const BIG_EXCEPTIONS = {
  'src/main/config/schema.ts': 'the config schema: one entry a key',
  'src/main/protocol.ts': 'the wire types between the UI and the engine',
  'src/workers/protocol/mcp.ts': 'the wire types between the engine and the MCP worker',
};

// The layers of src/main, lowest first. A module may import its own folder, any layer below its
// own and src/workers; never one above. (src/ui above src/main above src/workers is ESLint's.)
// Top-level files are named by file, folders by name.
const LAYERS = [
  [
    'errors.ts',
    'paths.ts',
    'log.ts',
    'version.ts',
    'name-glob.ts',
    'protocol.ts',
    'debounce.ts',
    'code-cache.ts',
  ], // shared
  ['config'], // reading and checking .niffler/config.yaml and the home config
  ['trust'], // what a repository may contribute, and the effective policy
  ['threads'], // the engine's handles on its worker threads and pool
  ['calls'], // the shapes of a turn's tool calls (entries, the table, the turn's IO, hooks) and of a transcript's lines
  ['extensions'], // agents, commands, hooks, tasks, repository tools, skills
  ['lsp'], // language servers: the service and the lsp tool
  ['engine'], // sessions, the turn loop, request handlers
  ['gateway'], // the MCP gateway serving the engine's tools to other clients
  ['daemon'], // the per-repository process, its socket and its lifecycle
];

const sourceFiles = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(file);
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [file] : [];
  });

const FUNCTIONS = new Set([
  ts.SyntaxKind.FunctionDeclaration,
  ts.SyntaxKind.FunctionExpression,
  ts.SyntaxKind.ArrowFunction,
  ts.SyntaxKind.MethodDeclaration,
  ts.SyntaxKind.Constructor,
  ts.SyntaxKind.GetAccessor,
  ts.SyntaxKind.SetAccessor,
]);

/** A function's name as a reader would look it up: its own, or the variable or property it is assigned to. */
const nameOf = (node) => {
  if (node.name) return node.name.getText();
  const parent = node.parent;
  if (
    parent &&
    (ts.isVariableDeclaration(parent) ||
      ts.isPropertyAssignment(parent) ||
      ts.isPropertyDeclaration(parent))
  )
    return parent.name.getText();
  if (node.kind === ts.SyntaxKind.Constructor) return 'constructor';
  return '(anonymous)';
};

const isTypeOnly = (node) => {
  if (ts.isImportDeclaration(node)) {
    const clause = node.importClause;
    if (!clause) return false; // `import './x'` runs the module
    if (clause.isTypeOnly) return true;
    if (clause.name) return false;
    const bindings = clause.namedBindings;
    if (!bindings) return true;
    if (ts.isNamespaceImport(bindings)) return false;
    return bindings.elements.length > 0 && bindings.elements.every((e) => e.isTypeOnly);
  }
  if (ts.isExportDeclaration(node)) {
    if (node.isTypeOnly) return true;
    const clause = node.exportClause;
    return (
      !!clause &&
      ts.isNamedExports(clause) &&
      clause.elements.length > 0 &&
      clause.elements.every((e) => e.isTypeOnly)
    );
  }
  return false;
};

const resolveImport = (from, specifier) => {
  if (!specifier.startsWith('.')) return undefined;
  return path.resolve(path.dirname(from), specifier);
};

const analyse = () => {
  const files = sourceFiles(path.join(root, 'src'));
  const functions = [];
  const edges = new Map(files.map((f) => [f, { runtime: new Set(), type: new Set() }]));
  const lines = new Map();
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    lines.set(file, text.split('\n').length);
    const source = ts.createSourceFile(
      file,
      text,
      ts.ScriptTarget.Latest,
      true,
      file.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS,
    );
    const visit = (node) => {
      if (FUNCTIONS.has(node.kind) && node.body) {
        const start = source.getLineAndCharacterOfPosition(node.getStart()).line;
        const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
        functions.push({
          file: path.relative(root, file),
          name: nameOf(node),
          lines: end - start + 1,
        });
      }
      if (
        (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
        node.moduleSpecifier &&
        ts.isStringLiteral(node.moduleSpecifier)
      ) {
        const target = resolveImport(file, node.moduleSpecifier.text);
        if (target && edges.has(target))
          edges.get(file)[isTypeOnly(node) ? 'type' : 'runtime'].add(target);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return { files, functions, edges, lines };
};

/** Strongly connected components of more than one file (Tarjan), over the chosen edges. */
const cycles = (files, next) => {
  let index = 0;
  const state = new Map();
  const stack = [];
  const found = [];
  const connect = (file) => {
    state.set(file, { index, low: index, onStack: true });
    index++;
    stack.push(file);
    for (const to of next(file)) {
      if (!state.has(to)) {
        connect(to);
        state.get(file).low = Math.min(state.get(file).low, state.get(to).low);
      } else if (state.get(to).onStack)
        state.get(file).low = Math.min(state.get(file).low, state.get(to).index);
    }
    if (state.get(file).low === state.get(file).index) {
      const component = [];
      let member;
      do {
        member = stack.pop();
        state.get(member).onStack = false;
        component.push(path.relative(root, member));
      } while (member !== file);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const file of files) if (!state.has(file)) connect(file);
  return found;
};

/** The layer of a file of src/main (an index into LAYERS), or undefined for a file outside it. */
const layerOf = (file) => {
  const rel = path.relative(path.join(root, 'src', 'main'), file);
  if (rel.startsWith('..')) return undefined;
  const top = folderOf(file);
  const layer = LAYERS.findIndex((names) => names.includes(top));
  if (layer < 0) {
    console.error(`house: src/main/${top} is in no layer; add it to LAYERS in scripts/house.mjs`);
    process.exit(1);
  }
  return layer;
};

/** The folder (or top-level file) of src/main a file is in, as LAYERS names it. */
const folderOf = (file) => path.relative(path.join(root, 'src', 'main'), file).split(path.sep)[0];

/**
 * Modules of src/main importing (statically, type-only imports too) a folder in a layer above
 * their own: one row a module and folder, naming the files it takes from there.
 */
const upward = (files, edges) =>
  files.flatMap((file) => {
    const from = layerOf(file);
    if (from === undefined) return [];
    const above = new Map();
    for (const to of [...edges.get(file).runtime, ...edges.get(file).type]) {
      if ((layerOf(to) ?? -1) <= from) continue;
      const folder = `src/main/${folderOf(to)}`;
      above.set(folder, [...(above.get(folder) ?? []), path.relative(root, to)]);
    }
    return [...above].map(([folder, taken]) => ({
      from: path.relative(root, file),
      to: folder,
      files: taken.sort(),
    }));
  });

const ALL = Symbol('every export');
const EXPORTING = new Set([
  ts.SyntaxKind.FunctionDeclaration,
  ts.SyntaxKind.ClassDeclaration,
  ts.SyntaxKind.InterfaceDeclaration,
  ts.SyntaxKind.TypeAliasDeclaration,
  ts.SyntaxKind.EnumDeclaration,
  ts.SyntaxKind.ModuleDeclaration,
]);
const hasModifier = (node, kind) =>
  ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === kind);

/** The names a module exports (its top-level statements only). */
const exportsOf = (source) =>
  source.statements.flatMap((node) => {
    if (ts.isExportAssignment(node)) return ['default'];
    if (ts.isExportDeclaration(node))
      return node.exportClause && ts.isNamedExports(node.exportClause)
        ? node.exportClause.elements.map((e) => e.name.text)
        : [];
    if (!hasModifier(node, ts.SyntaxKind.ExportKeyword)) return [];
    if (hasModifier(node, ts.SyntaxKind.DefaultKeyword)) return ['default'];
    if (ts.isVariableStatement(node))
      return node.declarationList.declarations
        .filter((d) => ts.isIdentifier(d.name))
        .map((d) => d.name.text);
    return EXPORTING.has(node.kind) && node.name ? [node.name.text] : [];
  });

/** What one file takes from others: target file → names taken (ALL for a namespace or `export *`). */
const usesOf = (file, source, take) => {
  const target = (literal) =>
    literal && ts.isStringLiteralLike(literal) ? resolveImport(file, literal.text) : undefined;
  const visit = (node) => {
    if (ts.isImportDeclaration(node) && node.importClause) {
      const to = target(node.moduleSpecifier);
      const clause = node.importClause;
      if (clause.name) take(to, 'default');
      const bindings = clause.namedBindings;
      if (bindings && ts.isNamespaceImport(bindings)) take(to, ALL);
      else for (const e of bindings?.elements ?? []) take(to, (e.propertyName ?? e.name).text);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier) {
      const to = target(node.moduleSpecifier);
      const clause = node.exportClause;
      if (!clause || !ts.isNamedExports(clause)) take(to, ALL);
      else for (const e of clause.elements) take(to, (e.propertyName ?? e.name).text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments.length > 0
    ) {
      // `(await import('./x.ts')).name` takes name; any other use of a lazy import takes it all
      const to = target(node.arguments[0]);
      const outer = node.parent?.parent;
      const access = outer && ts.isParenthesizedExpression(outer) ? outer.parent : undefined;
      if (access && ts.isPropertyAccessExpression(access) && ts.isAwaitExpression(node.parent))
        take(to, access.name.text);
      else take(to, ALL);
    } else if (ts.isImportTypeNode(node)) {
      const literal = ts.isLiteralTypeNode(node.argument) ? node.argument.literal : undefined;
      let name = node.qualifier;
      while (name && ts.isQualifiedName(name)) name = name.left;
      take(target(literal), name ? name.text : ALL);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
};

const readers = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : readers(file);
    return /\.(tsx?|mts|mjs|js)$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [file] : [];
  });

// Exports the build imports by another name, which no import statement shows: name each, and why.
const BUILD_IMPORTS = {
  'src/main/config/lazy-zod.ts': {
    z: "the config commands' bundle resolves `zod` to this file (scripts/build-options.mjs)",
  },
};

/**
 * Exports of src/ that no other file imports — from src/, test/, bench/ or scripts/ — by name.
 * A default export is left out: the worker files' are loaded by file name (piscina).
 */
const unused = (files) => {
  const parse = (file) =>
    ts.createSourceFile(
      file,
      readFileSync(file, 'utf8'),
      ts.ScriptTarget.Latest,
      true,
      file.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS,
    );
  const taken = new Map();
  const take = (to, name) => {
    if (!to) return;
    if (!taken.has(to)) taken.set(to, new Set());
    taken.get(to).add(name);
  };
  const everyReader = ['src', 'test', 'bench', 'scripts']
    .map((dir) => path.join(root, dir))
    .filter((dir) => existsSync(dir))
    .flatMap(readers);
  const sources = new Map();
  for (const file of everyReader) {
    const source = parse(file);
    sources.set(file, source);
    usesOf(file, source, take);
  }
  return files.flatMap((file) => {
    const used = taken.get(file) ?? new Set();
    if (used.has(ALL)) return [];
    const built = BUILD_IMPORTS[path.relative(root, file)] ?? {};
    return exportsOf(sources.get(file))
      .filter((name) => name !== 'default' && !used.has(name) && !(name in built))
      .map((name) => ({ file: path.relative(root, file), name }));
  });
};

const { files, functions, edges, lines } = analyse();
const runtimeCycles = cycles(files, (f) => edges.get(f).runtime);
const allCycles = cycles(files, (f) => [...edges.get(f).runtime, ...edges.get(f).type]);
const typeOnlyCycles = allCycles.filter(
  (c) => !runtimeCycles.some((r) => c.every((f) => r.includes(f)) && r.length === c.length),
);
const sizes = [...lines.values()].sort((a, b) => a - b);
const bigFiles = [...lines]
  .filter(([file, count]) => count > BIG && !BIG_EXCEPTIONS[path.relative(root, file)])
  .map(([file, count]) => ({ file: path.relative(root, file), lines: count }))
  .sort((a, b) => b.lines - a.lines);
const upwardImports = upward(files, edges);
const unusedExports = unused(files);
const long = functions.filter((f) => f.lines > LONG).sort((a, b) => b.lines - a.lines);
const report = {
  files: files.length,
  fileLines: {
    median: sizes[Math.floor(sizes.length / 2)],
    p90: sizes[Math.floor(sizes.length * 0.9)],
    max: sizes.at(-1),
  },
  functions: functions.length,
  longFunctions: long,
  runtimeCycles,
  typeOnlyCycles,
  bigFiles,
  upwardImports,
  unusedExports,
};
const figures = {
  runtimeCycles: runtimeCycles.length,
  typeOnlyCycles: typeOnlyCycles.length,
  longFunctions: long.length,
  bigFiles: bigFiles.length,
  upwardImports: upwardImports.length,
  unusedExports: unusedExports.length,
};
const over = Object.entries(LIMITS).filter(([key, limit]) => figures[key] > limit.ceiling);

if (process.argv.includes('--json'))
  console.log(JSON.stringify({ ...report, figures, limits: LIMITS }, null, 2));
else {
  console.log(
    `house: ${report.files} files (lines: median ${report.fileLines.median}, p90 ${report.fileLines.p90}, max ${report.fileLines.max}); ` +
      `${report.functions} functions, ${long.length} over ${LONG} lines; ${runtimeCycles.length} runtime and ${typeOnlyCycles.length} type-only import cycles`,
  );
  for (const f of long.slice(0, 15))
    console.log(`  ${String(f.lines).padStart(4)} lines  ${f.file}  ${f.name}`);
  for (const c of typeOnlyCycles) console.log(`  type-only cycle: ${c.join(' ↔ ')}`);
  for (const f of bigFiles) console.log(`  ${String(f.lines).padStart(4)} lines  ${f.file}`);
  for (const u of upwardImports)
    console.log(
      `  upward import: ${u.from} → ${u.to} (${u.files.map((f) => path.basename(f)).join(', ')})`,
    );
  for (const u of unusedExports) console.log(`  unused export: ${u.file}  ${u.name}`);
  console.log('house: figure / ceiling (goal)');
  for (const [key, limit] of Object.entries(LIMITS))
    console.log(
      `  ${String(figures[key]).padStart(4)} / ${String(limit.ceiling).padStart(3)} (${limit.goal})  ${limit.what}${figures[key] > limit.ceiling ? '  ← over its ceiling' : ''}`,
    );
}
if (runtimeCycles.length) {
  for (const c of runtimeCycles)
    console.error(
      `house: runtime import cycle: ${c.join(' → ')}; break it (a shared module, a type-only import, or a lazy import())`,
    );
  process.exit(1);
}
for (const [key, limit] of over)
  console.error(
    `house: ${figures[key]} ${limit.what}, over the ceiling of ${limit.ceiling} in scripts/house.mjs (goal ${limit.goal}); bring it back down (the list above names them)`,
  );
if (over.length) process.exit(1);

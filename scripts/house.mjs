// The house in numbers: function lengths, file sizes and import cycles of src/. Fails (exit 1) on
// a runtime import cycle — one made of static imports that load code, as opposed to `import type`
// or lazy `import()` — since those make module start-up order matter. Run by `npm run lint`.
// `--json` prints the figures for the closing notes of a change.
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const rootArg = process.argv.indexOf('--root');
const root =
  rootArg > 0 ? path.resolve(process.argv[rootArg + 1]) : path.resolve(import.meta.dirname, '..');
const LONG = 60;

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

const { files, functions, edges, lines } = analyse();
const runtimeCycles = cycles(files, (f) => edges.get(f).runtime);
const allCycles = cycles(files, (f) => [...edges.get(f).runtime, ...edges.get(f).type]);
const typeOnlyCycles = allCycles.filter(
  (c) => !runtimeCycles.some((r) => c.every((f) => r.includes(f)) && r.length === c.length),
);
const sizes = [...lines.values()].sort((a, b) => a - b);
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
};

if (process.argv.includes('--json')) console.log(JSON.stringify(report, null, 2));
else {
  console.log(
    `house: ${report.files} files (lines: median ${report.fileLines.median}, p90 ${report.fileLines.p90}, max ${report.fileLines.max}); ` +
      `${report.functions} functions, ${long.length} over ${LONG} lines; ${runtimeCycles.length} runtime and ${typeOnlyCycles.length} type-only import cycles`,
  );
  for (const f of long.slice(0, 15))
    console.log(`  ${String(f.lines).padStart(4)} lines  ${f.file}  ${f.name}`);
  for (const c of typeOnlyCycles) console.log(`  type-only cycle: ${c.join(' ↔ ')}`);
}
if (runtimeCycles.length) {
  for (const c of runtimeCycles)
    console.error(
      `house: runtime import cycle: ${c.join(' → ')}; break it (a shared module, a type-only import, or a lazy import())`,
    );
  process.exit(1);
}

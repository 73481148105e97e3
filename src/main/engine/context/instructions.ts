import { existsSync } from 'node:fs';
import path from 'node:path';
import { MAX_FILE_BYTES, readConfined } from '../../../workers/shared/read-confined.ts';

// Instruction files: what the user and the repository tell the model about how to work here.
// Global ones from $NIFFLER_HOME (yours), then the repository's `.niffler/prompts/` and, in every
// directory from the workspace root down to where niffler was started, NIFFLER.md, AGENTS.md and
// CLAUDE.md. `@path` inside them imports another file of the workspace.

/** Names read in each directory from the root down to the working directory, in this order. */
const PER_DIRECTORY = ['NIFFLER.md', 'AGENTS.md', 'CLAUDE.md'] as const;

/** The repository's own prompt files at its root, with their headings. */
const REPO_PROMPTS = [
  ['.niffler/prompts/REPO.md', 'About this repository'],
  ['.niffler/prompts/PROJECT.md', 'Current project'],
] as const;

/**
 * Bytes one instruction file gives, its imports included; past it, the file is cut and a note
 * says so. Room for a whole 15–30 KB CLAUDE.md or AGENTS.md.
 */
export const FILE_BUDGET = 32 * 1024;
/** Bytes of instructions given in all (the common CLAUDE.md + AGENTS.md pair fits whole). */
export const INSTRUCTIONS_BUDGET = 64 * 1024;
/** How deep `@path` imports nest. */
const MAX_IMPORT_DEPTH = 4;

/** One instruction file as it joins the system prompt. */
interface InstructionFile {
  /** As shown: relative to the root, or `~/.niffler/NIFFLER.md`. */
  file: string;
  title: string;
  text: string;
}

interface Instructions {
  files: InstructionFile[];
  /** Repository files left out because the repository is not trusted. */
  untrusted: string[];
  /** Files or imports refused: outside the workspace, not regular, unreadable, a loop. */
  refused: { file: string; why: string }[];
  /** Files cut by the size or total budget. */
  cut: string[];
}

/** Directories from `root` down to `cwd` (just `root` when `cwd` is not inside it). */
const chain = (root: string, cwd: string): string[] => {
  const rel = path.relative(root, cwd);
  if (!rel || rel.startsWith('..') || path.isAbsolute(rel)) return [root];
  const parts = rel.split(path.sep);
  return [root, ...parts.map((_, i) => path.join(root, ...parts.slice(0, i + 1)))];
};

/** The repository's instruction files for `cwd`, root first (names only; nothing is read). */
export const repositoryInstructionFiles = (root: string, cwd: string = root): string[] => [
  ...REPO_PROMPTS.map(([file]) => path.join(root, file)),
  ...chain(root, cwd).flatMap((dir) => PER_DIRECTORY.map((name) => path.join(dir, name))),
];

/** `@path/to/file.md` after a space or at a line's start, ending before a space or punctuation. */
const IMPORT = /(^|\s)@((?:\.{0,2}\/)?[\w.-][\w./-]*\.\w+)(?=[\s,;:)!?]|\.(?:\s|$)|$)/gm;

/** State shared while one prompt's instructions are gathered. */
interface Gather {
  within: string;
  left: number;
  out: Instructions;
  /** Real paths of the files given so far (each is given once: `CLAUDE.md` = `@AGENTS.md` + notes). */
  given: Set<string>;
}

/**
 * `text` with each `@path` that names a file of the workspace replaced by that file's text
 * (itself expanded, up to `MAX_IMPORT_DEPTH`); a path that is not a file stays as it is.
 */
const expandImports = (text: string, from: string, g: Gather, seen: string[]): string =>
  text.replace(IMPORT, (whole, lead: string, ref: string) => {
    const target = path.resolve(path.dirname(from), ref);
    if (!existsSync(target)) return whole;
    const read = readConfined(target, g.within);
    if (!read) return whole;
    if ('refused' in read) {
      g.out.refused.push({
        file: `@${ref} (in ${path.relative(g.within, from)})`,
        why: read.refused,
      });
      return whole;
    }
    if (seen.includes(read.real) || seen.length > MAX_IMPORT_DEPTH) {
      g.out.refused.push({
        file: `@${ref} (in ${path.relative(g.within, from)})`,
        why: seen.includes(read.real)
          ? 'imports itself (a loop)'
          : `nests deeper than ${MAX_IMPORT_DEPTH} imports`,
      });
      return whole;
    }
    if (g.given.has(read.real)) return `${lead}[@${ref}: given once, above]`;
    g.given.add(read.real);
    return `${lead}${expandImports(read.text, read.real, g, [...seen, read.real])}`;
  });

/** Adds one file (if it exists and may be read) within the budget. */
const add = (file: string, title: string, shown: string, g: Gather): void => {
  const read = readConfined(file, g.within);
  if (!read) return;
  if ('refused' in read) {
    g.out.refused.push({ file: shown, why: read.refused });
    return;
  }
  // Given already, imported by a file before it (or the same file by another name).
  if (g.given.has(read.real)) return;
  g.given.add(read.real);
  // HTML comments in the templates are notes for the human who edits them.
  let text = expandImports(read.text, read.real, g, [read.real])
    .replace(/<!--[\s\S]*?-->/g, '')
    .trim();
  if (!text) return;
  let cut = read.cut;
  const room = Math.max(0, Math.min(FILE_BUDGET, g.left));
  const bytes = Buffer.byteLength(text);
  if (bytes > room) {
    text = Buffer.from(text).subarray(0, room).toString('utf8');
    cut = true;
  }
  if (cut) {
    g.out.cut.push(`${shown} (${room} of ${read.cut ? `over ${MAX_FILE_BYTES}` : bytes} bytes)`);
    text += `\n\n[${shown} is cut here: instructions are limited to ${FILE_BUDGET} bytes a file and ${INSTRUCTIONS_BUDGET} bytes in all]`;
  }
  g.left -= Buffer.byteLength(text);
  if (text.trim()) g.out.files.push({ file: shown, title, text });
};

/**
 * Gathers the instruction files for a turn: the user's own (`home`: NIFFLER.md, AGENTS.md in
 * `$NIFFLER_HOME`), then — only when `trusted` — the repository's, each read confined, each
 * file once (an import of one given already is a marker), each within `FILE_BUDGET` and all
 * within `INSTRUCTIONS_BUDGET`.
 */
export const gatherInstructions = (options: {
  root: string;
  cwd?: string;
  home: string;
  trusted: boolean;
}): Instructions => {
  const out: Instructions = { files: [], untrusted: [], refused: [], cut: [] };
  // Your own files may be symlinks into a dotfiles repository: confined to nothing but `/`.
  const given = new Set<string>();
  const global = { within: '/', left: INSTRUCTIONS_BUDGET, out, given };
  for (const name of ['NIFFLER.md', 'AGENTS.md'])
    if (existsSync(path.join(options.home, name)))
      add(
        path.join(options.home, name),
        `Your instructions (${name})`,
        `$NIFFLER_HOME/${name}`,
        global,
      );
  const files = repositoryInstructionFiles(options.root, options.cwd);
  if (!options.trusted) {
    out.untrusted = files.filter(existsSync).map((f) => path.relative(options.root, f));
    return out;
  }
  const repo = { within: options.root, left: global.left, out, given };
  for (const file of files) {
    const shown = path.relative(options.root, file);
    const title = REPO_PROMPTS.find(([f]) => f === shown)?.[1] ?? shown;
    add(file, title, shown, repo);
  }
  return out;
};

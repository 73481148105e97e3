import { createHash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { isObject } from '../../workers/shared/is-object.ts';
import type { Part } from './part.ts';

// Trust covers what it runs: a trusted hook, repository tool, `` !`cmd` `` or stdio server whose
// command line names a file of the repository (`bash hookscripts/post.sh`, `python3 scripts/x.py`,
// `node ./server.js`, `"$CLAUDE_PROJECT_DIR"/.claude/hooks/check.sh`) runs that file's content,
// which a `git pull` — or a model — can change. Each such file is a part of the trust digest, by
// its content: an edit makes the repository untrusted again, and `niffler trust --diff` names it.

/** Files of one repository counted, at most (a command line naming more is unusual). */
const MAX_FILES = 64;
/** Bytes of a file hashed, at most; a larger one counts by its size and change time. */
const MAX_BYTES = 64 * 1024 * 1024;

/** A repository file some command runs, as the digest holds it. */
export interface ScriptValue {
  sha256: string;
  bytes: number;
}

/** The words of a shell command line, roughly as a shell splits them: quotes joined and removed. */
export const shellWords = (line: string): string[] => {
  const out: string[] = [];
  let word = '';
  let open = false;
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === '\\' && quote === '"' && i + 1 < line.length) word += line[++i];
      else word += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      open = true;
    } else if (c === '\\' && i + 1 < line.length) {
      word += line[++i];
      open = true;
    } else if (/[\s;&|<>()`]/.test(c)) {
      if (open) out.push(word);
      word = '';
      open = false;
    } else {
      word += c;
      open = true;
    }
  }
  if (open) out.push(word);
  return out;
};

/** A word with the project variables filled in, and what follows `=` in `--flag=path` too. */
const candidates = (word: string, root: string): string[] => {
  const filled = word.replace(/\$\{?(NIFFLER_PROJECT_DIR|CLAUDE_PROJECT_DIR)\}?/g, root);
  return filled.includes('=') ? [filled, filled.slice(filled.indexOf('=') + 1)] : [filled];
};

/** The real path of a regular file inside `root` that `word` names from `cwd`, if it names one. */
const repositoryFile = (word: string, cwd: string, root: string): string | undefined => {
  if (!word || word.startsWith('-') || word.includes('\0')) return undefined;
  try {
    const real = realpathSync(path.resolve(cwd, word));
    const inside = real.startsWith(root + path.sep);
    return inside && statSync(real).isFile() ? real : undefined;
  } catch {
    return undefined;
  }
};

/** SHA-256 and size of a file (past `MAX_BYTES`: its size and change time stand for it). */
const hashFile = (file: string): ScriptValue => {
  const fd = openSync(file, 'r');
  try {
    const { size, ctimeMs } = fstatSync(fd);
    if (size > MAX_BYTES) return { sha256: `large, changed at ${ctimeMs}`, bytes: size };
    const hash = createHash('sha256');
    const buffer = Buffer.alloc(Math.min(size, 1024 * 1024) || 1);
    let read: number;
    while ((read = readSync(fd, buffer, 0, buffer.length, null)) > 0)
      hash.update(buffer.subarray(0, read));
    return { sha256: hash.digest('hex'), bytes: size };
  } finally {
    closeSync(fd);
  }
};

/** A hook handler's words: its command line, or (exec form) its program and `args`. */
const hookWords = (hook: Record<string, unknown>, root: string) => {
  if (typeof hook['command'] !== 'string') return [];
  const args = Array.isArray(hook['args']) ? hook['args'].map(String) : undefined;
  return [{ words: args ? [hook['command'], ...args] : shellWords(hook['command']), cwd: root }];
};

/** The words of what `part` makes niffler run (and where it runs), if it runs anything. */
const commandWords = (part: Part, root: string): { words: string[]; cwd: string }[] => {
  const value = part.value;
  const line = (text: unknown, cwd = root) =>
    typeof text === 'string' ? [{ words: shellWords(text), cwd }] : [];
  if (part.kind === 'server' && isObject(value) && typeof value['command'] === 'string') {
    const args = Array.isArray(value['args']) ? value['args'].map(String) : [];
    const dir = typeof value['workingDir'] === 'string' ? value['workingDir'] : '.';
    return [{ words: [value['command'], ...args], cwd: path.resolve(root, dir) }];
  }
  if (part.path[0] === 'hooks' && Array.isArray(value))
    return value.flatMap((matcher) =>
      isObject(matcher) && Array.isArray(matcher['hooks'])
        ? matcher['hooks'].flatMap((hook) => (isObject(hook) ? hookWords(hook, root) : []))
        : [],
    );
  if (part.path[0] === 'tools' && isObject(value)) return line(value['command']);
  if (part.path[0] === 'commands' && isObject(value) && Array.isArray(value['shell']))
    return value['shell'].flatMap((text) => line(text));
  return [];
};

/**
 * The repository files the commands of `parts` run — a trusted hook's, a repository tool's, a
 * command's `` !`cmd` ``, a stdio server's (its program and arguments) — each a part with its
 * content's digest. Every word of a command line that names a regular file inside the repository
 * counts (interpreter arguments too), once; `.git` and niffler's home never count.
 */
export const scriptParts = (parts: readonly Part[], root: string, home: string): Part[] => {
  const realRoot = (() => {
    try {
      return realpathSync(root);
    } catch {
      return root;
    }
  })();
  const files = new Set<string>();
  for (const part of parts)
    for (const { words, cwd } of commandWords(part, realRoot))
      for (const word of words.flatMap((w) => candidates(w, realRoot))) {
        const file = repositoryFile(word, cwd, realRoot);
        const inGit = file?.split(path.sep).includes('.git');
        if (file && !inGit && !file.startsWith(home + path.sep) && files.size < MAX_FILES)
          files.add(file);
      }
  return [...files].map((file) => {
    const rel = path.relative(realRoot, file);
    return {
      key: `files:${rel}`,
      path: ['files', rel],
      file,
      line: undefined,
      value: hashFile(file),
      kind: 'script' as const,
    };
  });
};

/** How a script was when its part was made: what `scriptsChanged` compares without reading. */
interface Seen {
  file: string;
  value: ScriptValue;
  stat: string;
}

const statKey = (file: string): string => {
  try {
    const s = statSync(file);
    return `${s.dev}:${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`;
  } catch {
    return 'gone';
  }
};

/** What to remember of `parts`' scripts to tell, cheaply, whether one changed since. */
export const seenScripts = (parts: readonly Part[]): Seen[] =>
  parts
    .filter((p) => p.kind === 'script')
    .map((p) => ({ file: p.file, value: p.value as ScriptValue, stat: statKey(p.file) }));

/**
 * The first script that changed since `seen` was taken (a stat tells most; a changed stat is
 * read and hashed again), by its path; undefined when none did.
 */
export const scriptsChanged = (seen: readonly Seen[]): string | undefined => {
  for (const script of seen) {
    const now = statKey(script.file);
    if (now === script.stat) continue;
    if (now === 'gone') return script.file;
    try {
      if (hashFile(script.file).sha256 !== script.value.sha256) return script.file;
    } catch {
      return script.file;
    }
  }
  return undefined;
};

/**
 * The files beside an extension part that carries them by content (a repository skill's
 * `files`: its scripts and references, relative to the directory of its `SKILL.md`).
 */
const filesBeside = (parts: readonly Part[]): { file: string; stat: string }[] =>
  parts.flatMap((p) => {
    const files = isObject(p.value) ? p.value['files'] : undefined;
    if (p.kind !== 'extension' || !isObject(files)) return [];
    const dir = path.dirname(p.file);
    return Object.keys(files).map((name) => {
      const file = path.join(dir, name);
      return { file, stat: statKey(file) };
    });
  });

/** The scripts of the config in use, watched: `changed` says whether one changed since. */
export class ScriptWatch {
  #seen: Seen[] = [];
  #beside: { file: string; stat: string }[] = [];

  /** Remembers the scripts of a config just read (only a trusted repository's run). */
  take(loaded: { trust: { level: string; contribution: { parts: readonly Part[] } } }): void {
    const trusted = loaded.trust.level === 'trusted';
    const parts = loaded.trust.contribution.parts;
    this.#seen = trusted ? seenScripts(parts) : [];
    this.#beside = trusted ? filesBeside(parts) : [];
  }

  /**
   * The first script that changed since `take`, by its path; for a skill's files any change of
   * their stat counts (the config read again tells whether their content did).
   */
  changed(): string | undefined {
    const script = this.#seen.length ? scriptsChanged(this.#seen) : undefined;
    return script ?? this.#beside.find((f) => statKey(f.file) !== f.stat)?.file;
  }

  /** Their paths (to watch). */
  files(): string[] {
    return [...this.#seen.map((s) => s.file), ...this.#beside.map((f) => f.file)];
  }
}

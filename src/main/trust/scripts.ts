import { sha256Hash } from '../../workers/shared/sha256.ts';
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
interface ScriptValue {
  sha256: string;
  bytes: number;
}

/** The words of a shell command line, roughly as a shell splits them: quotes joined and removed. */
const shellWords = (line: string): string[] => {
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
    const hash = sha256Hash();
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

/**
 * A file whose content is in the trust digest, as it was when its part was made: what `changed`
 * compares without reading. `sha256` (a script's) lets a changed stat be told from a changed
 * content; without it (a skill's files and directories) any change of the stat counts, and the
 * config read again tells whether the digest changed.
 */
interface Watched {
  file: string;
  stat: string;
  sha256?: string;
}

const statKey = (file: string): string => {
  try {
    const s = statSync(file);
    return `${s.dev}:${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`;
  } catch {
    return 'gone';
  }
};

/**
 * The files whose content `parts` hold in the trust digest: each script a command runs (by its
 * hash), and the files beside an extension part that carries them by content (a repository
 * skill's `files`, relative to the directory of its `SKILL.md`) with the directories that hold
 * them — a file added there changes its directory's stat.
 */
export const watchedFiles = (parts: readonly Part[]): Watched[] =>
  parts.flatMap((p): Watched[] => {
    if (p.kind === 'script')
      return [{ file: p.file, stat: statKey(p.file), sha256: (p.value as ScriptValue).sha256 }];
    const files = isObject(p.value) ? p.value['files'] : undefined;
    if (p.kind !== 'extension' || !isObject(files)) return [];
    const top = path.dirname(p.file);
    const inside = Object.keys(files).filter((name) => name !== '…');
    const dirs = new Set([top, ...inside.map((name) => path.dirname(path.join(top, name)))]);
    return [...dirs, ...inside.map((name) => path.join(top, name))].map((file) => ({
      file,
      stat: statKey(file),
    }));
  });

/**
 * The first watched file that changed since `watched` was taken (a stat tells most; a script
 * whose stat changed is read and hashed again), by its path; undefined when none did.
 */
export const firstChanged = (watched: readonly Watched[]): string | undefined => {
  for (const w of watched) {
    const now = statKey(w.file);
    if (now === w.stat) continue;
    if (now === 'gone' || w.sha256 === undefined) return w.file;
    try {
      if (hashFile(w.file).sha256 !== w.sha256) return w.file;
    } catch {
      return w.file;
    }
  }
  return undefined;
};

/** The files a trusted config's digest holds by content, watched: `changed` says whether one did. */
export class ScriptWatch {
  #watched: Watched[] = [];

  /** Remembers the files of a config just read (only a trusted repository's run). */
  take(loaded: { trust: { level: string; contribution: { parts: readonly Part[] } } }): void {
    const trusted = loaded.trust.level === 'trusted';
    this.#watched = trusted ? watchedFiles(loaded.trust.contribution.parts) : [];
  }

  /** The first file that changed since `take`, by its path. */
  changed(): string | undefined {
    return firstChanged(this.#watched);
  }

  /** Their paths (to watch). */
  files(): string[] {
    return this.#watched.map((w) => w.file);
  }
}

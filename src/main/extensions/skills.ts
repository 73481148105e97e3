import {
  fstatSync,
  lstatSync,
  readdirSync,
  readSync,
  realpathSync,
  type Dirent,
  type Stats,
} from 'node:fs';
import path from 'node:path';
import { ConfinedError, isInside } from '../../workers/shared/confine.ts';
import { openConfinedFile } from '../../workers/shared/confined-open.ts';
import { formatBytes } from '../../workers/shared/bounded-read.ts';
import { expandHome, hiddenFromSandbox, nifflerPaths, tildify, type Env } from '../paths.ts';
import type { Loaded, TrustNeed } from './files.ts';
import { skillDigest } from './skill-files.ts';
import { parseSkillFile, type SkillMeta } from './skill-parse.ts';

// Agent Skills (agentskills.io): a directory holding a SKILL.md, read where every agent keeps
// them — the repository's `.niffler/skills`, `.agents/skills`, `.claude/skills`,
// `.gemini/skills`, `.opencode/skills`, and yours in `$NIFFLER_HOME/skills`, `~/.agents/skills`,
// `~/.claude/skills` — one level of `NAME/SKILL.md` each. The nearest wins a name: the
// repository's over yours, in that order. A repository's skill is part of its trust digest,
// SKILL.md and every file beside it.

/** Where a skill comes from: your home, or the repository (which needs trust). */
type SkillSource = 'user' | 'repo';

/** One place skills are read from. */
interface SkillLocation {
  dir: string;
  source: SkillSource;
  /** The trust key's prefix of a repository's location: `claude:skills.pdf`. */
  prefix?: string;
  /** How listings name it: `.claude/skills`, `~/.agents/skills`. */
  label: string;
}

/** A SKILL.md larger than this is skipped: its whole body goes into the conversation. */
export const MAX_SKILL_BYTES = 256 * 1024;
/** Bytes of a SKILL.md read to find its frontmatter. */
const HEAD_BYTES = 64 * 1024;
/** Skill directories read in one location, at most. */
const MAX_SKILLS_PER_LOCATION = 1000;

/** A skill found and valid. */
export interface Skill extends SkillMeta {
  /** Its directory as found (`~/.claude/skills/pdf`), and its real path (what is read). */
  dir: string;
  real: string;
  /** Its SKILL.md, and how messages name it. */
  file: string;
  shown: string;
  source: SkillSource;
  location: string;
  /** SKILL.md's size. */
  bytes: number;
}

/** A skill directory that could not be used, and why. */
export interface InvalidSkill {
  /** Its directory's name. */
  name: string;
  file: string;
  shown: string;
  source: SkillSource;
  location: string;
  problems: string[];
}

interface SkillsRead {
  /** Valid skills, nearest location first (several may share a name: see `resolveSkills`). */
  skills: Loaded<Skill>[];
  invalid: InvalidSkill[];
  /** Locations that could not be read whole, one line each. */
  problems: string[];
}

/** The places skills are read from, nearest (highest precedence) first. */
export const skillLocations = (root: string, env: Env): SkillLocation[] => {
  const home = expandHome('~', env);
  const repo = (rel: string, prefix: string): SkillLocation => ({
    dir: path.join(root, rel, 'skills'),
    source: 'repo',
    prefix,
    label: `${rel}/skills`,
  });
  const user = (dir: string): SkillLocation => ({
    dir,
    source: 'user',
    label: tildify(dir, env),
  });
  return [
    repo('.niffler', 'repo'),
    repo('.agents', 'agents'),
    repo('.claude', 'claude'),
    repo('.gemini', 'gemini'),
    repo('.opencode', 'opencode'),
    user(path.join(nifflerPaths(root, env).home, 'skills')),
    user(path.join(home, '.agents', 'skills')),
    user(path.join(home, '.claude', 'skills')),
  ];
};

const realOr = (dir: string): string => {
  try {
    return realpathSync(dir);
  } catch {
    return path.resolve(dir);
  }
};

/** Your home, `$NIFFLER_HOME` and the places the sandbox hides, as real paths (read once per pass). */
interface PrivatePlaces {
  home: string;
  niffler: string;
  secret: string[];
}

const privatePlaces = (env: Env): PrivatePlaces => ({
  home: realOr(expandHome('~', env)),
  niffler: realOr(nifflerPaths('/', env).home),
  secret: hiddenFromSandbox(env).map(realOr),
});

/**
 * Why the user's skill directory `real` may not become readable by the file tools, or undefined:
 * it may not hold your home, `$NIFFLER_HOME` or a secret place (`~/.ssh`…), nor lie inside one
 * (but for `$NIFFLER_HOME/skills`).
 */
const userSkillDirProblem = (
  real: string,
  env: Env,
  { home, niffler, secret }: PrivatePlaces = privatePlaces(env),
): string | undefined => {
  if (isInside(home, real))
    return `resolves to ${real}, which holds your home directory; a skill's directory must be a directory of its own`;
  const holds = secret.find((s) => isInside(s, real));
  if (holds)
    return `resolves to ${real}, which holds ${tildify(holds, env)}; a skill's directory must not hold private places`;
  const within = secret.find((s) => isInside(real, s));
  if (within && !(within === niffler && isInside(real, path.join(niffler, 'skills'))))
    return `resolves to ${real}, inside ${tildify(within, env)}, which niffler keeps private`;
  return undefined;
};

/**
 * SKILL.md files parsed, by what their stat says: a config reload (any edit, a trust change)
 * parses only what changed. A skill's notes are copied out, never shared.
 */
const parsedCache = new Map<string, ReturnType<typeof parseSkillFile>>();
const KEEP_PARSED = 5_000;

/** What a parsed SKILL.md is filed under: where it is, how it is shown, and what its stat says. */
const parsedKey = (file: string, real: string, shown: string, stats: Stats): string =>
  `${real}\0${path.basename(file)}\0${shown}\0${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeMs}:${stats.ctimeMs}`;

/**
 * A SKILL.md parsed before and unchanged since, by one lstat: a reload opens only what changed.
 * Only a regular file in the skill's directory qualifies (the object the confined read accepted:
 * an edit or a replacement has another stat); a link is always read the confined way.
 */
const unchangedHead = (file: string, real: string, shown: string) => {
  let stats: Stats;
  try {
    stats = lstatSync(file);
  } catch {
    return undefined; // The confined read says what is wrong.
  }
  const key = parsedKey(file, real, shown, stats);
  return stats.isFile() && stats.nlink === 1 && parsedCache.has(key)
    ? { text: '', bytes: stats.size, key }
    : undefined;
};

/** The first `HEAD_BYTES` of SKILL.md (confined to the skill's real directory), and its size. */
const readHead = (
  file: string,
  real: string,
  shown: string,
): { text: string; bytes: number; key: string } => {
  const opened = openConfinedFile(file, { roots: [real] }, { shown });
  try {
    const stats = fstatSync(opened.fd);
    const { size } = stats;
    const key = parsedKey(file, real, shown, stats);
    if (parsedCache.has(key)) return { text: '', bytes: size, key };
    if (size > MAX_SKILL_BYTES)
      throw new ConfinedError(
        'too-large',
        shown,
        `is ${formatBytes(size)}; a skill's instructions go into the conversation whole when it is activated, so niffler reads at most ${formatBytes(MAX_SKILL_BYTES)} — move the detail into references/ (the standard suggests under 500 lines)`,
      );
    const buffer = Buffer.allocUnsafe(Math.min(size, HEAD_BYTES));
    let read = 0;
    while (read < buffer.length) {
      const n = readSync(opened.fd, buffer, read, buffer.length - read, read);
      if (n === 0) break;
      read += n;
    }
    return { text: buffer.subarray(0, read).toString('utf8'), bytes: size, key };
  } finally {
    opened.close();
  }
};

/** The entries of a location that may be skill directories (dirs, or links), sorted. */
const candidates = (dir: string): Dirent[] => {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((d) => !d.name.startsWith('.') && (d.isDirectory() || d.isSymbolicLink()))
      .sort((a, b) => a.name.localeCompare(b.name));
  } catch {
    return []; // No such directory (the usual case), or not one.
  }
};

/** The SKILL.md of a skill directory (`skill.md` too, as skills-ref accepts), if it has one. */
const skillFile = (dir: string): string | undefined => {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return undefined;
  }
  const name = names.includes('SKILL.md') ? 'SKILL.md' : names.find((n) => n === 'skill.md');
  return name ? path.join(dir, name) : undefined;
};

interface Where {
  root: string;
  realRoot: string;
  niffler: string;
  env: Env;
  places: PrivatePlaces;
}

/** Why a skill directory at `real` cannot be used from `location`, or undefined. */
const placeProblem = (real: string, location: SkillLocation, where: Where): string | undefined => {
  if (location.source === 'user') return userSkillDirProblem(real, where.env, where.places);
  if (!isInside(real, where.realRoot))
    return `resolves to ${real}, outside the repository; a repository's skill must be inside it (copy it in, or install it for yourself under ~/.agents/skills)`;
  if (isInside(real, where.niffler))
    return `resolves to ${real}, inside niffler's own home, which a repository cannot reach`;
  return undefined;
};

type One = { skill: Loaded<Skill> } | { invalid: InvalidSkill } | undefined;

/** Reads one skill directory of `location`: a skill, why it cannot be used, or nothing (no SKILL.md). */
const readOne = (entry: string, location: SkillLocation, where: Where): One => {
  const dir = path.join(location.dir, entry);
  const shownDir =
    location.source === 'repo' ? path.relative(where.root, dir) : tildify(dir, where.env);
  const bad = (file: string, problems: string[]): One => ({
    invalid: {
      name: entry,
      file,
      shown: shownDir,
      source: location.source,
      location: location.label,
      problems,
    },
  });
  let real: string;
  try {
    real = realpathSync.native(dir);
  } catch {
    return bad(dir, [`${shownDir}: a link that leads nowhere; remove it or point it at a skill`]);
  }
  const file = skillFile(dir);
  if (!file) return undefined; // Not a skill directory: nothing to say.
  const shown = `${shownDir}/${path.basename(file)}`;
  const place = placeProblem(real, location, where);
  if (place) return bad(file, [`${shownDir}: ${place}`]);
  let head: ReturnType<typeof readHead>;
  try {
    head = unchangedHead(file, real, shown) ?? readHead(file, real, shown);
  } catch (error) {
    const message = (error as Error).message;
    return bad(file, [
      error instanceof ConfinedError ? message : `${shown}: cannot be read: ${message}`,
    ]);
  }
  const parsed = parsedCache.get(head.key) ?? parseSkillFile(head.text, shown, entry);
  if (parsedCache.size >= KEEP_PARSED) parsedCache.clear();
  parsedCache.set(head.key, parsed);
  if (!parsed.ok) return bad(file, parsed.problem.split('\n'));
  const skill: Skill = {
    ...parsed.value.meta,
    notes: [...parsed.value.meta.notes],
    dir,
    real,
    file,
    shown,
    source: location.source,
    location: location.label,
    bytes: head.bytes,
  };
  if (location.source === 'user' || !location.prefix) return { skill };
  return { skill: { ...skill, trust: trustNeed(skill, location.prefix) } };
};

/** A repository skill's part of the trust digest: its description, allowed-tools and every file. */
const trustNeed = (skill: Skill, prefix: string): TrustNeed => ({
  key: `${prefix}:skills.${skill.name}`,
  path: ['skills', skill.name],
  file: skill.file,
  value: {
    description: skill.description,
    ...(skill.allowedToolsRaw ? { 'allowed-tools': skill.allowedToolsRaw } : {}),
    files: skillDigest(skill.real),
  },
});

/**
 * Every skill of the workspace `root` and of the user, trusted or not, nearest location first;
 * never throws: a directory that cannot be used is `invalid`, with what is wrong.
 */
export const readSkills = (root: string, env: Env): SkillsRead => {
  const where: Where = {
    root,
    realRoot: realOr(root),
    niffler: realOr(nifflerPaths(root, env).home),
    env,
    places: privatePlaces(env),
  };
  const skills: Loaded<Skill>[] = [];
  const invalid: InvalidSkill[] = [];
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const location of skillLocations(root, env)) {
    const list = candidates(location.dir);
    if (list.length > MAX_SKILLS_PER_LOCATION)
      problems.push(
        `${location.label}: ${list.length} entries; the first ${MAX_SKILLS_PER_LOCATION} were read, the rest skipped`,
      );
    for (const entry of list.slice(0, MAX_SKILLS_PER_LOCATION)) {
      const one = readOne(entry.name, location, where);
      if (!one) continue;
      if ('invalid' in one) {
        invalid.push(one.invalid);
        continue;
      }
      // The same directory reached twice (a link from ~/.claude/skills to ~/.agents/skills).
      if (seen.has(one.skill.real)) continue;
      seen.add(one.skill.real);
      skills.push(one.skill);
    }
  }
  return { skills, invalid, problems };
};

/** A skill that lost its name to a nearer one. */
interface Shadowed {
  skill: Skill;
  by: Skill;
}

/** The first skill of each name (the nearest), and those they shadow. */
export const resolveSkills = <S extends Skill>(
  skills: readonly S[],
): { winners: S[]; shadowed: Shadowed[] } => {
  const byName = new Map<string, S>();
  const shadowed: Shadowed[] = [];
  for (const skill of skills) {
    const had = byName.get(skill.name);
    if (had) shadowed.push({ skill, by: had });
    else byName.set(skill.name, skill);
  }
  return { winners: [...byName.values()], shadowed };
};

/** One line saying a skill is shadowed. */
export const shadowNote = ({ skill, by }: Shadowed): string =>
  `${skill.shown}: shadowed by ${by.shown} (the nearer skill of a name wins; rename one to have both)`;

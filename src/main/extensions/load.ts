import path from 'node:path';
import { nifflerPaths, tildify, type Env } from '../paths.ts';
import type { Part } from '../trust/part.ts';
import type { TrustDecision } from '../trust/decide.ts';
import { BUILTIN_AGENTS, parseAgent, type AgentProfile, type ExtensionSource } from './agents.ts';
import { parseCommand, type CustomCommand } from './commands.ts';
import { readExtensionDir, type DirOptions, type ExtensionFile, type Loaded } from './files.ts';
import type { Parsed } from './parse.ts';
import { parseRepoTool, type RepoTool } from './repo-tools.ts';
import { parseTask, type TaskDefinition } from './tasks.ts';
import { readSkills, skillLocations, type InvalidSkill, type Skill } from './skills.ts';
import { readOpencodeAgents } from './opencode-agents.ts';

export type { Loaded } from './files.ts';

/** Every agent, command, repository tool, task and skill found, and the files that were skipped. */
export interface Extensions {
  agents: Loaded<AgentProfile>[];
  commands: Loaded<CustomCommand>[];
  tools: Loaded<RepoTool>[];
  tasks: Loaded<TaskDefinition>[];
  /** Valid skills, nearest location first (the first of a name is the one used). */
  skills: Loaded<Skill>[];
  /** Skill directories skipped, with what is wrong; skill locations not read whole. */
  invalidSkills: InvalidSkill[];
  skillProblems: string[];
  /** `file:line: what is wrong` for each file skipped. */
  problems: string[];
  /** `file:line key: not used by niffler; ignored` for keys of loaded files that niffler has no use for. */
  notes: string[];
}

/** The directories extensions are read from, lowest precedence first within each kind. */
export const extensionDirs = (root: string, env: Env) => {
  const paths = nifflerPaths(root, env);
  const repo = paths.repoConfigDir;
  const claude = path.join(root, '.claude');
  const opencode = path.join(root, '.opencode');
  return {
    agents: [
      { dir: path.join(paths.home, 'agents'), source: 'user' as const },
      { dir: path.join(claude, 'agents'), source: 'repo' as const, prefix: 'claude' },
      // opencode reads agent/ and (newer) agents/.
      { dir: path.join(opencode, 'agent'), source: 'repo' as const, prefix: 'opencode' },
      { dir: path.join(opencode, 'agents'), source: 'repo' as const, prefix: 'opencode' },
      { dir: path.join(repo, 'agents'), source: 'repo' as const, prefix: 'repo' },
    ],
    commands: [
      { dir: path.join(paths.home, 'commands'), source: 'user' as const },
      { dir: path.join(claude, 'commands'), source: 'repo' as const, prefix: 'claude' },
      { dir: path.join(repo, 'commands'), source: 'repo' as const, prefix: 'repo' },
    ],
    tools: [{ dir: path.join(repo, 'tools'), source: 'repo' as const, prefix: 'repo' }],
    tasks: [
      { dir: path.join(paths.home, 'tasks'), source: 'user' as const },
      { dir: path.join(repo, 'tasks'), source: 'repo' as const, prefix: 'repo' },
    ],
    // Read by `readSkills` (one level of NAME/SKILL.md), listed here to be watched.
    skills: skillLocations(root, env).map(({ dir, source }) => ({ dir, source })),
  };
};

type Dir = { dir: string; source: ExtensionSource; prefix?: string };

/**
 * What one parser makes of a file: the item, what its trust part covers and the keys it left
 * unused; none when the file switches itself off.
 */
type Parser<T> = (
  file: ExtensionFile,
  dir: Dir,
) => Parsed<{ item: T; trustValue?: unknown; notes?: string[] } | undefined>;

/**
 * Reads one kind from its directories; a later directory's item replaces an earlier one of the
 * same name (repository over user) — unless `owned` says the name is not the repository's to
 * take: then the repository's file is left out, and why is one of the `problems`. Repository
 * items that need trust get their trust part.
 */
const readKind = <T extends { name: string }>(
  dirs: Dir[],
  kind: string,
  options: Omit<DirOptions, 'confine'>,
  root: string,
  parse: Parser<T>,
  found: Pick<Extensions, 'problems' | 'notes'>,
  owned: (name: string, had: Loaded<T> | undefined) => string | undefined = () => undefined,
): Loaded<T>[] => {
  const { problems } = found;
  const byName = new Map<string, Loaded<T>>();
  for (const dir of dirs) {
    // A repository's files stay inside it and out of $NIFFLER_HOME; yours inside their directory.
    const repo = dir.source === 'repo';
    const read = readExtensionDir(dir.dir, {
      ...options,
      confine: repo ? root : dir.dir,
      ...(repo ? {} : { excluded: [] }),
    });
    problems.push(...read.problems);
    for (const file of read.files) {
      const parsed = parse(file, dir);
      if (!parsed.ok) {
        problems.push(parsed.problem);
        continue;
      }
      if (!parsed.value) continue;
      const { item, trustValue } = parsed.value;
      found.notes.push(...(parsed.value.notes ?? []));
      const taken = dir.source === 'repo' ? owned(item.name, byName.get(item.name)) : undefined;
      if (taken) {
        problems.push(
          `${file.shown}: ${taken}; a repository cannot replace it, so this file is ignored (give it another name)`,
        );
        continue;
      }
      const trust =
        dir.prefix && trustValue !== undefined
          ? {
              key: `${dir.prefix}:${kind}.${item.name}`,
              path: [kind, item.name],
              file: file.file,
              value: trustValue,
            }
          : undefined;
      byName.set(item.name, { ...item, ...(trust ? { trust } : {}) });
    }
  }
  return [...byName.values()];
};

/**
 * Reads every extension of the workspace `root` and of `$NIFFLER_HOME`, trusted or not (see
 * `usableExtensions`). Never throws: a file that cannot be used is skipped with its problem.
 */
export const readExtensions = (root: string, env: Env): Extensions => {
  const dirs = extensionDirs(root, env);
  const excluded = [nifflerPaths(root, env).home];
  const found = { problems: [] as string[], notes: [] as string[] };
  const md = { endings: ['.md'], env, excluded };
  const yaml = { endings: ['.yaml', '.yml'], env, excluded };
  const agents = readKind<AgentProfile>(
    dirs.agents,
    'agents',
    md,
    root,
    (file, dir) => {
      const parsed = parseAgent(file, dir.source, dir.prefix === 'claude' ? 'subagent' : 'all');
      if (!parsed.ok || !parsed.value) return parsed.ok ? { ok: true, value: undefined } : parsed;
      const { profile, frontmatter, notes } = parsed.value;
      return { ok: true, value: { item: profile, trustValue: frontmatter, notes } };
    },
    found,
    // Names are owned: niffler's built-ins and your own profiles are not a repository's to take.
    (name, had) =>
      had?.source === 'user'
        ? `"${name}" is your own profile (${tildify(had.file ?? '', env)})`
        : !had && BUILTIN_AGENTS.some((b) => b.name === name)
          ? `"${name}" is niffler's built-in profile`
          : undefined,
  );
  const commands = readKind(
    dirs.commands,
    'commands',
    { ...md, recursive: true },
    root,
    parseCommand,
    found,
  );
  const tools = readKind(dirs.tools, 'tools', yaml, root, parseRepoTool, found);
  const tasks = readKind(dirs.tasks, 'tasks', yaml, root, parseTask, found);
  agents.unshift(...jsonAgents(root, agents, found));
  const builtins = BUILTIN_AGENTS.filter((b) => !agents.some((a) => a.name === b.name));
  const all = [...builtins, ...agents];
  const skills = readSkills(root, env);
  noteNameClashes(skills.skills, all, commands);
  return {
    agents: all,
    commands,
    tools,
    tasks,
    skills: skills.skills,
    invalidSkills: skills.invalid,
    skillProblems: skills.problems,
    ...found,
  };
};

/**
 * A skill named like an agent profile or a custom command keeps its name (skills have their own
 * tool and `/skills NAME`); a note says which is which.
 */
const noteNameClashes = (
  skills: readonly Skill[],
  agents: readonly AgentProfile[],
  commands: readonly CustomCommand[],
): void => {
  for (const skill of skills) {
    if (agents.some((a) => a.name === skill.name))
      skill.notes.push(
        `an agent profile is named ${skill.name} too: --agent ${skill.name} picks the profile; the skill tool and /skills ${skill.name}, this skill`,
      );
    if (commands.some((c) => c.name === skill.name))
      skill.notes.push(
        `a custom command is named /${skill.name} too: /${skill.name} runs the command; /skills ${skill.name} activates this skill`,
      );
  }
};

/**
 * opencode.json's agents, each a repository contribution (`opencode:agents.NAME`); a name an
 * agent file, your own profile or a built-in has already is the file's (opencode's Markdown
 * agents and JSON agents do not share names in practice), and said.
 */
const jsonAgents = (
  root: string,
  agents: readonly Loaded<AgentProfile>[],
  found: Pick<Extensions, 'problems' | 'notes'>,
): Loaded<AgentProfile>[] =>
  readOpencodeAgents(root, found).flatMap(({ profile, trustValue, notes }) => {
    const had = agents.find((a) => a.name === profile.name);
    const builtin = BUILTIN_AGENTS.some((b) => b.name === profile.name);
    if (had || builtin) {
      found.problems.push(
        `opencode.json agent.${profile.name}: "${profile.name}" is already ${had ? `defined by ${had.file ?? 'a profile'}` : "niffler's built-in profile"}; this entry is ignored (give it another name)`,
      );
      return [];
    }
    found.notes.push(...notes);
    const file = profile.file ?? path.join(root, 'opencode.json');
    const trust = {
      key: `opencode:agents.${profile.name}`,
      path: ['agents', profile.name],
      file,
      value: trustValue,
    };
    return [{ ...profile, trust }];
  });

/** The trust parts of what the repository contributes (see `repositoryContribution`). */
export const extensionParts = (extensions: Extensions): Part[] =>
  [
    ...extensions.agents,
    ...extensions.commands,
    ...extensions.tools,
    ...extensions.tasks,
    ...extensions.skills,
  ].flatMap((item: Loaded<{ name: string }>) =>
    item.trust
      ? [
          {
            key: item.trust.key,
            path: item.trust.path,
            file: item.trust.file,
            line: 1,
            value: item.trust.value,
            kind: 'extension' as const,
          },
        ]
      : [],
  );

/**
 * What may be used: everything when the repository is trusted; else what needs no trust, and one
 * line naming what was left out — its agents, commands that run shell, tools, tasks, skills and
 * hooks (undefined when nothing was).
 */
export const usableExtensions = (loaded: {
  extensions: Extensions;
  trust: TrustDecision;
}): { extensions: Extensions; ignored?: string } => {
  const { extensions, trust } = loaded;
  if (trust.level === 'trusted') return { extensions };
  const keep = <T>(items: Loaded<T>[]) => items.filter((item) => !item.trust);
  const left = trust.contribution.parts
    .filter((p) => p.kind === 'extension' || p.path[0] === 'hooks')
    .map((p) => p.path.join('.'));
  return {
    extensions: {
      agents: keep(extensions.agents),
      commands: keep(extensions.commands),
      tools: keep(extensions.tools),
      tasks: keep(extensions.tasks),
      skills: keep(extensions.skills),
      invalidSkills: extensions.invalidSkills,
      skillProblems: extensions.skillProblems,
      problems: extensions.problems,
      notes: extensions.notes,
    },
    ...(left.length
      ? {
          ignored: `${
            trust.level === 'changed' && trust.changes.length
              ? `this repository changed since you trusted it (${trust.changes.map((c) => `${c.key.replace(/^[^:]+:/, '')} ${c.change}`).join(', ')})`
              : 'this repository is not trusted'
          }: its ${left.join(', ')} are ignored (review with niffler trust --diff, then niffler trust)`,
        }
      : {}),
  };
};

import type { ToolEntry, TurnIO } from '../calls/types.ts';
import type { TranscriptEntry } from '../calls/transcript-entry.ts';
import type { LoadedConfig } from './workspace-config.ts';
import { NifflerError } from '../errors.ts';
import { matchesName } from '../name-glob.ts';
import { fail } from '../../workers/protocol/tool-result.ts';
import type { ProfileLimit, SkillGrant } from '../trust/effective.ts';
import { usableExtensions, type Loaded } from './load.ts';
import { catalogBudget, SKILL_TOOL, skillCatalog, skillToolSpec } from './skill-catalog.ts';
import { skillContent } from './skill-content.ts';
import { resolveSkills, type Skill } from './skills.ts';

// A session's skills: which it is offered (the usable ones — a repository's only while trusted —
// the nearest of each name, as the profile chain's `skills:` lists allow), the `skill` tool that
// activates one, and what activation leaves for the rest of the session: your skill's directory
// readable by the file tools and bash's sandbox, its `allowed-tools` in the effective policy.
// The transcript records each activation, so a resumed session has them again.

/** How an activation is recorded in the transcript. */
type SkillRecord = Extract<TranscriptEntry, { type: 'skill' }>;

/** A skill active in a session. */
interface Active {
  name: string;
  source: Skill['source'];
  real: string;
  shown: string;
  tools: readonly string[];
}

interface SessionSkillsDeps {
  root: string;
  config: () => LoadedConfig;
  /** Appends an activation to the session's transcript. */
  record: (skill: Pick<SkillRecord, 'name' | 'source' | 'dir' | 'by'>) => void;
}

/** Whether every profile of `chain` that lists skills lists `name` (a glob or the name). */
export const chainOffers = (chain: readonly ProfileLimit[], name: string): boolean =>
  chain.every((p) => !p.skills || p.skills.some((pattern) => matchesName(name, pattern)));

/** Why `name` is not a skill this session may use, with what it may use instead. */
const unknownSkill = (name: string, offered: readonly Skill[], loaded: LoadedConfig): string => {
  const repo = loaded.extensions.skills.find((s) => s.name === name && s.source === 'repo');
  if (repo && loaded.trust.level !== 'trusted')
    return `skill ${name} is the repository's (${repo.shown}), which is not trusted: review it with niffler trust --diff, then niffler trust`;
  const words = name
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 2);
  const near = offered.filter((s) =>
    words.some((w) => s.name.includes(w) || s.description.toLowerCase().includes(w)),
  );
  const list = (near.length ? near : offered).map((s) => s.name).join(', ');
  const shown = list.length > 2000 ? `${list.slice(0, 2000)}, …` : list;
  return offered.length
    ? `there is no skill named "${name}"; ${near.length ? 'the nearest' : 'the skills'}: ${shown}`
    : `there is no skill named "${name}": no skill is offered here (niffler skills lists them and why)`;
};

export class SessionSkills {
  readonly #active = new Map<string, Active>();
  #noticed = '';

  constructor(private readonly deps: SessionSkillsDeps) {}

  /** The skills the user may activate under `chain`: usable, nearest of each name, as the chain allows. */
  #usable(chain: readonly ProfileLimit[]): Loaded<Skill>[] {
    const { skills } = usableExtensions(this.deps.config()).extensions;
    return resolveSkills(skills).winners.filter((s) => chainOffers(chain, s.name));
  }

  /** The skills the model is offered under `chain` (not those that keep to the user's hand). */
  offered(chain: readonly ProfileLimit[]): Loaded<Skill>[] {
    return this.#usable(chain).filter((s) => !s.userOnly);
  }

  /** The Skills section of the system prompt for a model with a `window`-token context. */
  section(chain: readonly ProfileLimit[], window: number): string | undefined {
    return skillCatalog(this.offered(chain), catalogBudget(window), [...this.#active.keys()]);
  }

  /** The `skill` tool for `chain`'s turns; none when no skill is offered. */
  tool(chain: readonly ProfileLimit[]): ToolEntry | undefined {
    const offered = this.offered(chain);
    if (offered.length === 0) return undefined;
    return {
      spec: skillToolSpec(),
      kind: 'engine',
      readOnly: true,
      destructive: false,
      searchable: offered.map((s) => ({
        kind: 'skill' as const,
        spec: { name: s.name, description: s.description, inputSchema: {} },
      })),
      run: async (args, call) => {
        const name = typeof args['name'] === 'string' ? args['name'].trim() : '';
        if (!name) return fail('invalid-args', 'skill needs the name of a skill: {"name": "…"}');
        try {
          return { ok: true, output: this.activate(name, chain, 'model', call?.io).text };
        } catch (error) {
          return fail('not-found', (error as Error).message);
        }
      },
    };
  }

  /** The skill `name` the user may activate under `chain`; a `usage` error naming those there are when none. */
  find(name: string, chain: readonly ProfileLimit[]): Loaded<Skill> {
    const choices = this.#usable(chain);
    const skill = choices.find((s) => s.name === name);
    if (!skill) throw new NifflerError('usage', unknownSkill(name, choices, this.deps.config()));
    return skill;
  }

  /**
   * Activates `name` for this session: its content for the model; your skill's directory readable
   * from now on and its `allowed-tools` pre-approved; the activation recorded and shown. Throws a
   * `usage` error naming the skills there are when there is no such skill here.
   */
  activate(
    name: string,
    chain: readonly ProfileLimit[],
    by: SkillRecord['by'],
    io?: Pick<TurnIO, 'emit'>,
  ): { text: string } {
    const loaded = this.deps.config();
    const choices = by === 'user' ? this.#usable(chain) : this.offered(chain);
    const skill = choices.find((s) => s.name === name);
    if (!skill) throw new NifflerError('usage', unknownSkill(name, choices, loaded));
    const content = skillContent(skill, this.deps.root);
    const first = !this.#active.has(skill.name);
    this.#take(skill);
    if (first) this.deps.record({ name: skill.name, source: skill.source, dir: skill.real, by });
    io?.emit({
      type: 'skill',
      name: skill.name,
      source: skill.source,
      directory: content.directory,
      files: content.files,
      by,
    });
    return { text: content.text };
  }

  /**
   * The text of a turn the user began with `/skills NAME [request]`: the skill activated, its
   * content, and the request (or a word to use it).
   */
  userTurn(
    name: string,
    request: string,
    chain: readonly ProfileLimit[],
    io: Pick<TurnIO, 'emit'>,
  ): string {
    const { text } = this.activate(name, chain, 'user', io);
    return [
      `[I activated the skill ${name}; here it is]`,
      text,
      '',
      request || `Use the ${name} skill for what comes next; say briefly what it lets you do.`,
    ].join('\n');
  }

  #take(skill: Skill): void {
    this.#active.set(skill.name, {
      name: skill.name,
      source: skill.source,
      real: skill.real,
      shown: skill.dir,
      tools: skill.allowedTools ?? [],
    });
  }

  /** Your active skills' directories: readable (never writable) by this session's file tools and commands. */
  readOnlyPaths(): string[] {
    return [...this.#active.values()].filter((a) => a.source === 'user').map((a) => a.real);
  }

  /** The active skills' `allowed-tools`, for the effective policy. */
  grants(): SkillGrant[] {
    return [...this.#active.values()].map((a) => ({
      name: a.name,
      source: a.source,
      shown: `skill ${a.name} (${a.shown})`,
      tools: a.tools,
    }));
  }

  /** Names of the skills active now. */
  get active(): string[] {
    return [...this.#active.keys()];
  }

  /**
   * The activations a transcript records, taken again — each only while it is still the same
   * skill (same name, same directory) and usable here.
   */
  restore(entries: readonly TranscriptEntry[]): void {
    let usable: Loaded<Skill>[];
    try {
      usable = this.#usable([]);
    } catch {
      return; // The config does not load now: the next turn says why.
    }
    for (const entry of entries) {
      if (entry.type !== 'skill') continue;
      const skill = usable.find((s) => s.name === entry.name && s.real === entry.dir);
      if (skill) this.#take(skill);
    }
  }

  /** What to say once per session: skill directories skipped, and why (none when nothing changed). */
  notices(): string[] {
    const { invalidSkills, skillProblems } = this.deps.config().extensions;
    const lines = [
      ...invalidSkills.map((s) => `skill skipped: ${s.problems.join('; ')}`),
      ...skillProblems,
    ];
    const key = lines.join('\n');
    if (!key || key === this.#noticed) return [];
    this.#noticed = key;
    const shown = lines.slice(0, 5);
    if (lines.length > 5) shown.push(`… and ${lines.length - 5} more (niffler skills lists them)`);
    return shown;
  }

  /** The skill tool's name, for checks elsewhere. */
  static readonly TOOL = SKILL_TOOL;
}

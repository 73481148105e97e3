import type { AgentProfile } from '../extensions/agents.ts';
import type { SessionHooks } from '../extensions/hook-points.ts';
import { SKILL_TOOL } from '../extensions/skill-catalog.ts';
import type { SessionSkills } from '../extensions/skill-session.ts';
import type { PromptParams } from '../protocol.ts';
import type { ProfileLimit } from '../trust/effective.ts';
import { buildSystemPrompt, type PromptOptions } from './context/prompt.ts';
import type { SessionDeps } from './session-deps.ts';
import type { ToolTable, TurnIO } from './tool-calls.ts';

/** The system prompt of a turn, and how much of it is instruction files. */
export interface TurnPrompt {
  text: string;
  instructionChars: number;
}

type PromptDeps = Pick<SessionDeps, 'root' | 'home' | 'config' | 'instructions'>;

/**
 * How a session's system prompt is built: instruction files (the repository's only while it is
 * trusted), the agent's prompt, hooks' context, MCP servers' instructions and the Skills section.
 */
export class SessionPrompt {
  /** The prompt-file notices last shown, so each is said once. */
  #notes = '';

  constructor(
    private readonly deps: PromptDeps,
    private readonly hooks: Pick<SessionHooks, 'context'>,
    private readonly skills: SessionSkills,
  ) {}

  /**
   * The system prompt, with the repository's prompt files only while it is trusted; says once
   * per session what was left out and why.
   */
  async system(
    hasTools: boolean,
    params: PromptParams,
    io: TurnIO,
    signal: AbortSignal,
    agent?: AgentProfile,
    skills?: string,
  ): Promise<TurnPrompt> {
    const prompt = await buildSystemPrompt({
      ...this.options(hasTools, params, signal, agent),
      ...(skills ? { skills } : {}),
    });
    const notes = [
      ...(prompt.untrusted.length
        ? [
            `${prompt.untrusted.join(', ')} not given to the model: this repository is not trusted (review with niffler trust --diff, then niffler trust)`,
          ]
        : []),
      ...prompt.refused.map(({ file, why }) => `${file} not given to the model: it ${why}`),
      ...prompt.cut.map(
        (file) => `${file} given to the model in part: cut at the instruction limits`,
      ),
    ];
    const key = notes.join('\n');
    if (key && key !== this.#notes)
      for (const text of notes) io.emit({ type: 'notice', level: 'warn', text });
    this.#notes = key;
    return { text: prompt.text, instructionChars: prompt.instructionChars };
  }

  /** How the system prompt of a turn with these tools and this agent is built. */
  options(
    hasTools: boolean,
    params: Pick<PromptParams, 'cwd'>,
    signal: AbortSignal,
    agent?: AgentProfile,
  ): PromptOptions {
    const loaded = this.deps.config();
    return {
      root: this.deps.root,
      ...(params.cwd ? { cwd: params.cwd } : {}),
      home: this.deps.home,
      hasTools,
      trusted: loaded.trust.level === 'trusted',
      git: loaded.config.agent.git,
      instructions: this.deps.instructions?.() ?? [],
      ...(agent?.prompt ? { agent: { name: agent.name, prompt: agent.prompt } } : {}),
      ...(this.hooks.context.length ? { hookContext: this.hooks.context } : {}),
      signal,
    };
  }

  /** The Skills section of a turn's system prompt (when it has the skill tool); says once what was skipped. */
  skillSection(
    chain: ProfileLimit[],
    table: ToolTable,
    window: number,
    io: TurnIO,
  ): string | undefined {
    for (const text of this.skills.notices()) io.emit({ type: 'notice', level: 'warn', text });
    return table.has(SKILL_TOOL) ? this.skills.section(chain, window) : undefined;
  }
}

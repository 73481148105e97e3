import type {
  McpElicitation,
  McpElicitationAnswer,
  McpSamplingAnswer,
  McpSamplingParams,
} from '../../workers/protocol/mcp.ts';
import type { Config } from '../config/schema.ts';
import type { Env } from '../paths.ts';
import type { AttachedClient, PromptParams } from '../protocol.ts';
import { resolveModelSpec, type ApiHost } from '../threads/api.ts';

/** A turn running now, and the front-end that asked for it. */
export interface ActiveTurn {
  client: AttachedClient;
  params: PromptParams;
  signal: AbortSignal;
}

type Content = Record<string, string | number | boolean | string[]>;

/** The answer to a form elicitation built from the schema's defaults (used with `--yes`). */
export const applyElicitationDefaults = (elicitation: McpElicitation): Content => {
  const properties = (elicitation.requestedSchema['properties'] ?? {}) as Record<
    string,
    { default?: unknown }
  >;
  const content: Content = {};
  for (const [key, property] of Object.entries(properties)) {
    const value = property.default;
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
      content[key] = value;
    else if (Array.isArray(value) && value.every((v) => typeof v === 'string'))
      content[key] = value;
  }
  return content;
};

/** One line saying what a server wants the model to do, for the approval prompt. */
export const summarizeSampling = (params: McpSamplingParams): string => {
  const last = params.messages.at(-1);
  const content = last?.content as { type?: string; text?: string } | undefined;
  const text = content?.type === 'text' && content.text ? content.text : '(non-text content)';
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
};

/**
 * A server's elicitation, answered by the front-end of the turn running now (`turn`): asked in
 * an interactive session, filled from its defaults with `--yes`, declined otherwise.
 */
export const elicit = async (
  turn: ActiveTurn | undefined,
  server: string,
  elicitation: McpElicitation,
): Promise<McpElicitationAnswer> => {
  if (turn?.params.interactive)
    return turn.client.ask('elicitation/ask', { server, elicitation }, turn.signal);
  if (turn?.params.yes) {
    const content = applyElicitationDefaults(elicitation);
    const required = (elicitation.requestedSchema['required'] ?? []) as string[];
    const missing = required.filter((key) => !(key in content));
    if (missing.length === 0) return { action: 'accept', content };
    return {
      action: 'decline',
      reason: `--yes can only answer with defaults, and ${missing.join(', ')} has none`,
    };
  }
  return {
    action: 'decline',
    reason: turn
      ? 'one-shot mode without --yes: nobody can answer'
      : 'no user interface is attached to answer it',
  };
};

/** What a sampling request is answered with: the turn running now, the config, the API worker. */
interface SamplingDeps {
  turn: ActiveTurn | undefined;
  config: () => Config;
  env: Env;
  api: Pick<ApiHost, 'stream'>;
}

/**
 * A server's sampling request, approved by the user of the turn running now (or `--yes`) and
 * answered by that turn's model.
 */
export const sample = async (
  { turn, config, env, api }: SamplingDeps,
  server: string,
  params: McpSamplingParams,
): Promise<McpSamplingAnswer> => {
  if (!turn) return { ok: false, reason: 'no session is running to approve a sampling request' };
  if (!turn.params.yes) {
    if (!turn.params.interactive)
      return { ok: false, reason: 'one-shot mode without --yes: sampling needs approval' };
    const { approve } = await turn.client.ask(
      'sampling/ask',
      { server, summary: summarizeSampling(params), maxTokens: params.maxTokens },
      turn.signal,
    );
    if (!approve) return { ok: false, reason: 'the user declined the sampling request' };
  }
  const model = resolveModelSpec(config(), turn.params.model ?? config().model, env);
  const messages = params.messages.map((m) => ({
    role: m.role,
    content:
      typeof m.content === 'object' && m.content && 'text' in m.content
        ? String(m.content.text)
        : '',
  }));
  const system =
    typeof params['systemPrompt'] === 'string'
      ? [{ role: 'system' as const, content: params['systemPrompt'] }]
      : [];
  let text = '';
  for await (const event of api.stream(
    {
      model: { ...model, maxTokens: params.maxTokens },
      messages: [...system, ...messages],
      tools: [],
    },
    turn.signal,
  ))
    if (event.type === 'text') text += event.text;
  return {
    ok: true,
    model: model.model,
    role: 'assistant',
    content: { type: 'text', text },
    stopReason: 'endTurn',
  };
};

import type { EngineApi as EngineClient } from './deferred-client.ts';
import type { Action } from './state/types.ts';
import {
  missingArguments,
  resourceMentions,
  type McpOffers,
  type PromptCommand,
} from './mcp-offers.ts';

/** What the ready servers offer, from the daemon (a server still starting is waited for). */
export const loadOffers = async (client: Pick<EngineClient, 'request'>): Promise<McpOffers> => {
  const [prompts, { resources, templates }] = await Promise.all([
    client.request('mcp/prompts', {}),
    client.request('mcp/resources', {}),
  ]);
  return { prompts, resources, templates };
};

/** The message a `/server:prompt` command sends: the prompt's text, from its server. */
export const expandPromptCommand = async (
  client: EngineClient,
  command: PromptCommand,
): Promise<string> => {
  const missing = missingArguments(command);
  const name = `/${command.server}:${command.prompt.name}`;
  if (missing.length)
    throw new Error(
      `${name} needs ${missing.join(', ')}: ${name} ${missing.map((m) => `${m}=…`).join(' ')} (Tab completes values the server offers)`,
    );
  const result = await client.request('mcp/prompt', {
    server: command.server,
    prompt: command.prompt.name,
    args: command.args,
  });
  if (!result.ok) throw new Error(`${name}: ${result.error.message}`);
  return result.output;
};

/** Characters of one resource attached to a message. */
const MAX_RESOURCE_CHARS = 100_000;

/**
 * Reads the resources `text` mentions as `@server:uri` and gives them as blocks to append to the
 * message, the mentions attached, and what could not be read.
 */
export const attachResources = async (
  client: Pick<EngineClient, 'request'>,
  text: string,
  offers: McpOffers,
): Promise<{ blocks: string[]; attachments: string[]; problems: string[] }> => {
  const mentions = resourceMentions(text, offers);
  const read = await Promise.all(
    mentions.map(async (m) => {
      try {
        return { m, result: await client.request('mcp/read', { server: m.server, uri: m.uri }) };
      } catch (error) {
        return { m, error: (error as Error).message };
      }
    }),
  );
  const out = { blocks: [] as string[], attachments: [] as string[], problems: [] as string[] };
  for (const { m, result, error } of read) {
    if (!result?.ok) {
      out.problems.push(`${m.token} not attached: ${error ?? result?.error.message}`);
      continue;
    }
    const body =
      result.output.length > MAX_RESOURCE_CHARS
        ? `${result.output.slice(0, MAX_RESOURCE_CHARS)}\n[cut here]`
        : result.output;
    out.blocks.push(`<resource server="${m.server}" uri="${m.uri}">\n${body}\n</resource>`);
    out.attachments.push(m.token);
  }
  return out;
};

/** Lists what the servers offer again when it may have changed; one listing at a time. */
export const offersRefresher = (client: EngineClient, dispatch: (action: Action) => void) => {
  let listing: Promise<void> | null = null;
  let listAgain = false;
  const refresh = (): void => {
    if (listing) {
      listAgain = true;
      return;
    }
    listing = loadOffers(client)
      .then((offers) => dispatch({ type: 'mcp-offers', offers }))
      .catch(() => undefined) // completion goes without; the commands say why
      .finally(() => {
        listing = null;
        if (!listAgain) return;
        listAgain = false;
        refresh();
      });
  };
  return refresh;
};

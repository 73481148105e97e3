import type { EngineApi } from './app/deferred-client.ts';
import { attachFiles } from './app/files.ts';
import { attachResources } from './app/mcp-input.ts';
import { NO_OFFERS, type McpOffers } from './app/mcp-offers.ts';

// What `@path` and `@server:uri` in a message become, in the interactive session and in `-p`
// alike: the files' and resources' contents appended to the message the model gets.

/** A word that may name a server's resource: `@server:something`. */
const RESOURCE_MENTION = /(?:^|\s)@[^\s:]+:\S/;

/** The message for the model, what was attached, and what could not be. */
interface Attached {
  body: string;
  attachments: string[];
  problems: string[];
}

/**
 * `text` with the workspace files it mentions as `@path` and the server resources it mentions as
 * `@server:uri` attached. `offers`: what the servers offer, or how to ask for it (only asked when
 * the text has a mention that could be one).
 */
export const attachMentions = async (
  client: Pick<EngineApi, 'request'>,
  root: string,
  text: string,
  offers: McpOffers | (() => Promise<McpOffers>),
): Promise<Attached> => {
  const files = attachFiles(root, text);
  const known =
    typeof offers !== 'function'
      ? offers
      : RESOURCE_MENTION.test(text)
        ? await offers()
        : NO_OFFERS;
  const resources = await attachResources(client, text, known);
  const blocks = resources.blocks.length ? `\n\n${resources.blocks.join('\n\n')}` : '';
  return {
    body: `${files.prompt}${blocks}`,
    attachments: [...files.attachments, ...resources.attachments],
    problems: [...files.problems, ...resources.problems],
  };
};

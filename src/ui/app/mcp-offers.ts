import type {
  McpPromptInfo,
  McpResourceInfo,
  McpResourceTemplateInfo,
} from '../../main/protocol.ts';

/** What the ready MCP servers offer the user: prompts (slash commands) and resources (@mentions). */
export interface McpOffers {
  prompts: McpPromptInfo[];
  resources: McpResourceInfo[];
  templates: McpResourceTemplateInfo[];
}

export const NO_OFFERS: McpOffers = { prompts: [], resources: [], templates: [] };

/** Suggestions shown at once, at most. */
const LIMIT = 8;

/** `/server:prompt` names that start with what was typed (`typed` includes the `/`). */
export const completePromptCommand = (typed: string, offers: McpOffers): string[] =>
  offers.prompts
    .map((p) => `/${p.server}:${p.name}`)
    .filter((name) => name.toLowerCase().startsWith(typed.toLowerCase()))
    .slice(0, LIMIT);

/**
 * `@server:uri` mentions that start with `token`: resources, and templates up to their first
 * variable (the rest is typed, its variables completed by the server where it can).
 */
export const completeMention = (token: string, offers: McpOffers): string[] => {
  const typed = token.replace(/^@/, '');
  const resources = offers.resources.map((r) => `${r.server}:${r.uri}`);
  const templates = offers.templates.map((t) => `${t.server}:${t.uriTemplate.split('{')[0]}`);
  return [...new Set([...resources, ...templates])]
    .filter((m) => m.startsWith(typed) && m !== typed)
    .slice(0, LIMIT)
    .map((m) => `@${m}`);
};

/** A `/server:prompt value… name=value…` line, read against the prompts offered. */
export interface PromptCommand {
  server: string;
  prompt: McpPromptInfo;
  args: Record<string, string>;
  /** The argument the last word fills, and what was typed of it (for completion). */
  current?: { name: string; value: string };
}

/**
 * Reads a prompt command: `name=value` words set that argument; other words fill the prompt's
 * arguments in order, the last one taking the rest of the line. Null when `text` names no prompt.
 */
export const parsePromptCommand = (text: string, offers: McpOffers): PromptCommand | null => {
  const match = /^\/([^\s:]+):(\S+)(?:\s+([\s\S]*))?$/.exec(text.trimStart());
  if (!match) return null;
  const [, server, name, rest = ''] = match;
  const prompt = offers.prompts.find((p) => p.server === server && p.name === name);
  if (!prompt) return null;
  const names = (prompt.arguments ?? []).map((a) => a.name);
  const args: Record<string, string> = {};
  const words = rest.split(/\s+/).filter(Boolean);
  const positional: string[] = [];
  for (const word of words) {
    const at = word.indexOf('=');
    if (at > 0 && names.includes(word.slice(0, at))) args[word.slice(0, at)] = word.slice(at + 1);
    else positional.push(word);
  }
  const free = names.filter((n) => !(n in args));
  free.forEach((n, i) => {
    const value = i === free.length - 1 ? positional.slice(i).join(' ') : positional[i];
    if (value) args[n] = value;
  });
  // The argument being typed: the one the last word went into, or the next one after a space.
  const typing = !/\s$/.test(text) && positional.length > 0 && words.at(-1) === positional.at(-1);
  const index = Math.min(typing ? positional.length - 1 : positional.length, free.length - 1);
  const current = free[index];
  return {
    server: server!,
    prompt,
    args,
    // What completion replaces is the word at the cursor.
    ...(current ? { current: { name: current, value: typing ? positional.at(-1)! : '' } } : {}),
  };
};

/** The arguments a prompt requires that `args` does not give. */
export const missingArguments = (command: PromptCommand): string[] =>
  (command.prompt.arguments ?? [])
    .filter((a) => a.required && !command.args[a.name])
    .map((a) => a.name);

/** The `@server:uri` mentions of `text` that name a server that offers resources. */
export const resourceMentions = (
  text: string,
  offers: McpOffers,
): { server: string; uri: string; token: string }[] => {
  const servers = new Set([
    ...offers.resources.map((r) => r.server),
    ...offers.templates.map((t) => t.server),
  ]);
  const found: { server: string; uri: string; token: string }[] = [];
  for (const match of text.matchAll(/(?:^|\s)@([^\s:]+):(\S+)/g)) {
    const server = match[1];
    // Punctuation after a mention ends the sentence, not the URI.
    const uri = match[2]!.replace(/[.,;:!?)\]]+$/, '');
    const token = `@${server}:${uri}`;
    if (servers.has(server!) && !found.some((f) => f.token === token))
      found.push({ server: server!, uri: uri, token });
  }
  return found;
};

/** An `@server:uri` being typed into a resource template's first variable. */
interface TemplateMention {
  server: string;
  template: string;
  /** The mention up to the variable (`@server:mem://notes/`). */
  prefix: string;
  variable: string;
  value: string;
}

/** Reads `token` as a template mention whose first variable is being typed; null otherwise. */
export const parseTemplateMention = (token: string, offers: McpOffers): TemplateMention | null => {
  for (const t of offers.templates) {
    const at = t.uriTemplate.indexOf('{');
    const variable = /^\{([^}]+)\}/.exec(t.uriTemplate.slice(at))?.[1];
    const prefix = `@${t.server}:${t.uriTemplate.slice(0, at)}`;
    if (at < 0 || !variable || !token.startsWith(prefix)) continue;
    const value = token.slice(prefix.length);
    if (/[/?#]/.test(value)) continue;
    return { server: t.server, template: t.uriTemplate, prefix, variable, value };
  }
  return null;
};

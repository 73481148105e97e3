import { usageError } from '../../main/errors.ts';
import type { McpTraceEntry } from '../../main/protocol.ts';
import { formatTraceEntry } from '../../workers/shared/trace-format.ts';
import type { GlobalOptions } from '../context.ts';
import { withEngine } from '../engine.ts';
import { truncate } from '../render/format.ts';
import { paint, print, printJson } from '../render/output.ts';
import { renderToolResult } from './mcp-live.ts';

// What servers offer besides tools — prompts and resources — and their protocol trace, from the
// daemon. Like the other live commands, nothing here loads the config schema, the SDK or Ink.

/** `--arg k=v` (repeatable) as prompt arguments. */
const parsePromptArgs = (pairs: string[] = []): Record<string, string> =>
  Object.fromEntries(
    pairs.map((pair) => {
      const at = pair.indexOf('=');
      if (at <= 0) throw usageError(`--arg takes NAME=VALUE, got "${pair}"; e.g. --arg who=world`);
      return [pair.slice(0, at), pair.slice(at + 1)];
    }),
  );

/** `niffler mcp prompts [NAME]`: each prompt with its arguments (required ones marked). */
export const mcpPrompts = (server: string | undefined, options: GlobalOptions): Promise<void> =>
  withEngine(options, async (client) => {
    const prompts = await client.request('mcp/prompts', server ? { server } : {});
    if (options.json) return printJson(prompts);
    if (prompts.length === 0)
      return print(
        server
          ? `Server "${server}" offers no prompts (or is not ready: niffler mcp status).`
          : 'No prompts: no ready server offers any (niffler mcp status).',
      );
    for (const p of prompts) {
      const args = (p.arguments ?? []).map((a) => (a.required ? `${a.name}=…` : `[${a.name}=…]`));
      print(`${paint('bold', `${p.server}:${p.name}`, process.stdout)} ${args.join(' ')}`.trim());
      if (p.description) print(`  ${truncate(p.description.replace(/\s+/g, ' '), 200)}`);
    }
    print(
      '\nRun one: niffler mcp prompt NAME PROMPT --arg k=v; in a session: /server:prompt value…',
    );
  });

/** `niffler mcp prompt NAME PROMPT [--arg k=v]…`: the prompt's messages, as the model would get them. */
export const mcpPrompt = (
  server: string,
  prompt: string,
  options: GlobalOptions & { arg?: string[] },
): Promise<void> => {
  const args = parsePromptArgs(options.arg);
  return withEngine(options, async (client) => {
    const result = await client.request('mcp/prompt', { server, prompt, args });
    if (options.json) printJson(result);
    else print(renderToolResult(result));
    if (!result.ok) process.exitCode = 1;
  });
};

/** `niffler mcp resources [NAME]`: resources (`server:uri`) and resource templates. */
export const mcpResources = (server: string | undefined, options: GlobalOptions): Promise<void> =>
  withEngine(options, async (client) => {
    const { resources, templates } = await client.request(
      'mcp/resources',
      server ? { server } : {},
    );
    if (options.json) return printJson({ resources, templates });
    if (resources.length + templates.length === 0)
      return print(
        server
          ? `Server "${server}" offers no resources (or is not ready: niffler mcp status).`
          : 'No resources: no ready server offers any (niffler mcp status).',
      );
    for (const r of resources)
      print(
        `${paint('bold', `${r.server}:${r.uri}`, process.stdout)}  ${r.name}${r.mimeType ? ` (${r.mimeType})` : ''}${r.description ? ` — ${truncate(r.description, 100)}` : ''}`,
      );
    for (const t of templates)
      print(
        `${paint('bold', `${t.server}:${t.uriTemplate}`, process.stdout)}  ${t.name} (template)${t.description ? ` — ${truncate(t.description, 100)}` : ''}`,
      );
    print('\nRead one: niffler mcp read NAME URI; in a session, mention it: @server:uri');
  });

/** `niffler mcp read NAME URI`: a resource's contents. */
export const mcpRead = (server: string, uri: string, options: GlobalOptions): Promise<void> =>
  withEngine(options, async (client) => {
    const result = await client.request('mcp/read', { server, uri });
    if (options.json) printJson(result);
    else print(renderToolResult(result));
    if (!result.ok) process.exitCode = 1;
  });

const time = (at: number) => new Date(at).toISOString().slice(11, 23);

/** One trace entry as a line of `mcp logs --trace`. */
export const traceLine = (entry: McpTraceEntry): string =>
  `${time(entry.at)} ${formatTraceEntry(entry)}`;

/**
 * `niffler mcp logs NAME --trace [--follow]`: the server's JSON-RPC messages as the daemon keeps
 * them (the last few hundred), then, following, each new one until Ctrl-C.
 */
export const mcpTrace = (
  server: string,
  options: GlobalOptions & { follow?: boolean; lines?: string },
): Promise<void> =>
  withEngine(options, async (client) => {
    const lines = Number.parseInt(options.lines ?? '200', 10);
    const show = (entries: McpTraceEntry[]) => {
      for (const e of entries) print(options.json ? JSON.stringify(e) : traceLine(e));
    };
    const first = (await client.request('mcp/trace', { server })).slice(-lines);
    if (options.json && !options.follow) return printJson(first);
    if (first.length === 0 && !options.follow)
      return print(
        `No messages traced for "${server}" yet: start it (niffler mcp start ${server}).`,
      );
    show(first);
    if (!options.follow) return;
    let since = first.at(-1)?.seq ?? 0;
    const stop = new AbortController();
    process.once('SIGINT', () => stop.abort());
    while (!stop.signal.aborted) {
      const next = await client.request('mcp/trace', { server, since });
      show(next);
      since = next.at(-1)?.seq ?? since;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  });

import { readFileSync } from 'node:fs';
import { usageError } from '../../main/errors.ts';
import type { McpToolInfo, ToolResult } from '../../main/protocol.ts';
import type { GlobalOptions } from '../context.ts';
import { withEngine } from '../engine.ts';
import { showMcpStatus } from './status-views.ts';
import { paint, print, printJson } from '../render/output.ts';
import { truncate } from '../render/format.ts';

// The live commands talk to the daemon only: this module must not load the config schema, the
// SDK or Ink, so that a warm `niffler mcp status` costs little more than starting Node.

/** `niffler mcp status`: live state and metrics from the daemon. */
export const mcpStatus = (options: GlobalOptions & { wait?: boolean }): Promise<void> =>
  withEngine(options, async (client) =>
    showMcpStatus(await client.request('mcp/status', options.wait ? { wait: true } : {}), options),
  );

const act =
  (method: 'mcp/start' | 'mcp/stop' | 'mcp/restart', verb: string) =>
  (name: string, options: GlobalOptions & { wait?: boolean }) =>
    withEngine(options, async (client) => {
      // Start and restart wait for the outcome (an error when the server fails) unless --no-wait.
      const status = await client.request(
        method,
        method !== 'mcp/stop' && options.wait === false ? { name, noWait: true } : { name },
      );
      if (options.json) printJson(status);
      else
        print(
          `${verb} ${name}: ${status.state}${status.pid ? ` (pid ${status.pid})` : ''}${status.state === 'failed' && status.lastError ? ` — ${status.lastError.message}` : ''}`,
        );
      if (status.state === 'failed') process.exitCode = 1;
    });

export const mcpStart = act('mcp/start', 'started');
export const mcpStop = act('mcp/stop', 'stopped');
export const mcpRestart = act('mcp/restart', 'restarted');

const annotationsOf = (tool: McpToolInfo): string => {
  const a = tool.annotations ?? {};
  return [
    a.readOnlyHint && 'read-only',
    a.destructiveHint && 'destructive',
    a.idempotentHint && 'idempotent',
    a.openWorldHint && 'open-world',
  ]
    .filter(Boolean)
    .join(', ');
};

/** `niffler mcp tools [NAME] [--schema]`: model-facing names, descriptions, annotations. */
export const mcpTools = (
  server: string | undefined,
  options: GlobalOptions & { schema?: boolean },
): Promise<void> =>
  withEngine(options, async (client) => {
    const tools = await client.request('mcp/tools', server ? { server } : {});
    if (options.json) {
      printJson(
        options.schema
          ? tools
          : tools.map(({ inputSchema: _i, outputSchema: _o, ...rest }) => rest),
      );
      return;
    }
    if (tools.length === 0) {
      print(
        server
          ? `Server "${server}" offers no tools (or is not ready: niffler mcp status).`
          : 'No tools: no server is ready (niffler mcp status).',
      );
      return;
    }
    for (const tool of tools) {
      const notes = annotationsOf(tool);
      print(`${paint('bold', tool.name, process.stdout)}${notes ? `  [${notes}]` : ''}`);
      if (tool.description) print(`  ${truncate(tool.description.replace(/\s+/g, ' '), 200)}`);
      if (options.schema) {
        print(`  input: ${JSON.stringify(tool.inputSchema)}`);
        if (tool.outputSchema) print(`  output: ${JSON.stringify(tool.outputSchema)}`);
      }
    }
  });

const parseArgs = (options: { args?: string; argsFile?: string }): Record<string, unknown> => {
  if (options.args && options.argsFile) throw usageError('give --args or --args-file, not both');
  const text = options.argsFile
    ? readFileSync(options.argsFile === '-' ? 0 : options.argsFile, 'utf8')
    : (options.args ?? '{}');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw usageError(
      `--args is not valid JSON (${(error as Error).message}); e.g. --args '{"message":"hi"}'`,
    );
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw usageError('--args must be a JSON object, e.g. --args \'{"message":"hi"}\'');
  return parsed as Record<string, unknown>;
};

/** Renders a normalized tool result as text for the terminal. */
export const renderToolResult = (result: ToolResult): string => {
  if (!result.ok) return `error (${result.error.code}): ${result.error.message}`;
  // Text, and embedded resources' text, are in `output` already.
  const extra = (result.content ?? [])
    .filter((c) => c.type !== 'text' && c.type !== 'resource')
    .map(
      (c) =>
        `[${c.type}${'mimeType' in c && c.mimeType ? ` ${c.mimeType}` : ''}${'uri' in c ? ` ${c.uri}` : ''}]`,
    );
  return [
    result.output,
    ...extra,
    ...(result.savedTo ? [`(full output saved to ${result.savedTo})`] : []),
  ]
    .filter(Boolean)
    .join('\n');
};

/** `niffler mcp call NAME TOOL [--args JSON | --args-file FILE]`. */
export const mcpCall = (
  server: string,
  tool: string,
  options: GlobalOptions & { args?: string; argsFile?: string },
): Promise<void> => {
  const args = parseArgs(options);
  return withEngine(options, async (client) => {
    const controller = new AbortController();
    const onSigint = () => controller.abort();
    process.once('SIGINT', onSigint);
    // Progress of a long call goes to stderr: one line each, or one updated line on a terminal.
    const progressToken = `call-${process.pid}`;
    let progressShown = false;
    const offProgress = client.onNotification('progress', ({ token, progress, total, message }) => {
      if (token !== progressToken) return;
      const text = `${total ? `${progress}/${total}` : progress}${message ? ` ${message}` : ''}`;
      if (process.stderr.isTTY) process.stderr.write(`\r\u001b[2K${paint('dim', text)}`);
      else process.stderr.write(`${text}\n`);
      progressShown = true;
    });
    try {
      const result = await client.request(
        'mcp/call',
        { server, tool, args, progressToken },
        controller.signal,
      );
      if (progressShown && process.stderr.isTTY) process.stderr.write('\r\u001b[2K');
      if (options.json) printJson(result);
      else print(renderToolResult(result));
      if (!result.ok) process.exitCode = 1;
    } finally {
      offProgress();
      process.off('SIGINT', onSigint);
    }
  });
};

import { InvalidArgumentError, Option, type Command } from 'commander';
import { TRUST_LEVELS } from '../main/config/trust-levels.ts';
import { MCP_SERVER_STATES } from '../workers/protocol/mcp.ts';
import { collect, globals } from './program-options.ts';

// `niffler mcp …`: the command tree's MCP servers group. Each action imports its command module
// only when it runs (and the config commands' bundle leaves out those it never runs: keep them
// `./commands/*.ts` imports of a module in src/ui).

/** `mcp start|stop|restart NAME`. */
const addMcpLifecycleCommands = (mcp: Command): void => {
  for (const [verb, description] of [
    ['start', 'start a server and wait until it is ready (exit 1 with its error if it fails)'],
    ['stop', 'stop a server (its process group ends)'],
    ['restart', 'restart a server and wait until it is ready (exit 1 with its error if it fails)'],
  ] as const) {
    const sub = mcp.command(`${verb} <name>`).description(description);
    if (verb !== 'stop') sub.option('--no-wait', 'return once it is starting, without the outcome');
    sub.option('--json', 'print JSON').action(async (name: string, _opts, command: Command) => {
      const commands = await import('./commands/mcp-live.ts');
      const run =
        verb === 'start'
          ? commands.mcpStart
          : verb === 'stop'
            ? commands.mcpStop
            : commands.mcpRestart;
      await run(name, globals(command));
    });
  }
};

/** `mcp` and its commands on servers: list, status, login, logout, start, stop, restart. */
const addMcpServerCommands = (program: Command): Command => {
  const mcp = program
    .command('mcp')
    .description('MCP servers: list, live status, start/stop, tools, calls, logs, add/remove')
    .addHelpText(
      'after',
      `
Examples:
  niffler mcp add fs -- npx -y @modelcontextprotocol/server-filesystem .
  niffler mcp add github --url https://api.githubcopilot.com/mcp/ --header 'Authorization:Bearer \${GITHUB_TOKEN}'
  niffler mcp status --json
  niffler mcp tools fs --schema
  niffler mcp call fs read_file --args '{"path":"README.md"}'
  niffler mcp logs fs --follow
  niffler mcp logs fs --trace --follow
  niffler mcp prompts; niffler mcp prompt everything simple_prompt
  niffler mcp resources; niffler mcp read everything demo://resource/static/document/architecture.md`,
    );
  mcp
    .command('list')
    .description(
      `configured servers: transport, enabled, trust (${TRUST_LEVELS.join(' | ')}), source file:line, what they run (starts nothing)`,
    )
    .option('--json', 'print JSON')
    .action(async (_opts, command: Command) =>
      (await import('./commands/mcp.ts')).mcpList(globals(command)),
    );
  mcp
    .command('status')
    .description(
      `live state from the daemon: state (${MCP_SERVER_STATES.join(' | ')}), pid, uptime, restarts, tools, calls, errors, latency`,
    )
    .option('--wait', 'wait until no server is still starting')
    .option('--json', 'print JSON')
    .action(async (_opts, command: Command) =>
      (await import('./commands/mcp-live.ts')).mcpStatus(globals(command)),
    );
  mcp
    .command('login <name>')
    .description(
      'authorize a remote server with OAuth (shows the URL, opens a browser), then start it',
    )
    .option('--no-browser', 'only print the authorization URL')
    .option('--json', 'print JSON')
    .action(async (name: string, opts: { browser?: boolean }, command: Command) =>
      (await import('./commands/mcp-auth.ts')).mcpLogin(name, { ...globals(command), ...opts }),
    );
  mcp
    .command('logout <name>')
    .description("forget a remote server's OAuth tokens and registration, and stop it")
    .option('--json', 'print JSON')
    .action(async (name: string, _opts, command: Command) =>
      (await import('./commands/mcp-auth.ts')).mcpLogout(name, globals(command)),
    );
  addMcpLifecycleCommands(mcp);
  return mcp;
};

/** `mcp logs NAME [--trace]`. */
const addMcpLogs = (mcp: Command): void => {
  mcp
    .command('logs <name>')
    .description(
      "the server's log (stderr, its log messages); --trace: its JSON-RPC messages, from the daemon",
    )
    .option('-f, --follow', 'keep printing what is appended')
    .option('-n, --lines <n>', 'lines to show', '200')
    .option(
      '--trace',
      'each JSON-RPC message: direction, kind, method, id, size, duration, body (redacted, cut)',
    )
    .option('--json', 'print JSON')
    .action(async (name: string, opts: { trace?: boolean }, command: Command) =>
      opts.trace
        ? (await import('./commands/mcp-offers.ts')).mcpTrace(name, globals(command))
        : (await import('./commands/mcp-local.ts')).mcpLogs(name, globals(command)),
    );
};

/** `mcp tools|call|logs|prompts|prompt|resources|read`: what the servers offer, used by hand. */
const addMcpOfferCommands = (mcp: Command): void => {
  mcp
    .command('tools [name]')
    .description('tools with their model-facing names, descriptions and annotations')
    .option('--schema', 'add input and output schemas')
    .option('--json', 'print JSON')
    .action(async (name: string | undefined, _opts, command: Command) =>
      (await import('./commands/mcp-live.ts')).mcpTools(name, globals(command)),
    );
  mcp
    .command('call <name> <tool>')
    .description('call one tool directly and print its normalized result')
    .option('--args <json>', 'arguments as a JSON object')
    .option('--args-file <file>', 'arguments from a JSON file (- for stdin)')
    .option('--json', 'print the raw result as JSON')
    .action(async (name: string, tool: string, _opts, command: Command) =>
      (await import('./commands/mcp-live.ts')).mcpCall(name, tool, globals(command)),
    );
  addMcpLogs(mcp);
  mcp
    .command('prompts [name]')
    .description('prompts the servers offer, with their arguments')
    .option('--json', 'print JSON')
    .action(async (name: string | undefined, _opts, command: Command) =>
      (await import('./commands/mcp-offers.ts')).mcpPrompts(name, globals(command)),
    );
  mcp
    .command('prompt <name> <prompt>')
    .description("get a server's prompt and print its messages (what /name:prompt sends)")
    .option('--arg <k=v>', 'a prompt argument (repeatable)', collect)
    .option('--json', 'print JSON')
    .action(async (name: string, prompt: string, _opts, command: Command) =>
      (await import('./commands/mcp-offers.ts')).mcpPrompt(name, prompt, globals(command)),
    );
  mcp
    .command('resources [name]')
    .description('resources (server:uri) and resource templates the servers offer')
    .option('--json', 'print JSON')
    .action(async (name: string | undefined, _opts, command: Command) =>
      (await import('./commands/mcp-offers.ts')).mcpResources(name, globals(command)),
    );
  mcp
    .command('read <name> <uri>')
    .description("read one of a server's resources (what @name:uri attaches)")
    .option('--json', 'print JSON')
    .action(async (name: string, uri: string, _opts, command: Command) =>
      (await import('./commands/mcp-offers.ts')).mcpRead(name, uri, globals(command)),
    );
};

/** `mcp serve`: the workspace as one MCP server for other clients. */
const addMcpServe = (mcp: Command): void => {
  mcp
    .command('serve')
    .description(
      "serve this repository's warm tools (built-ins and every MCP server's), prompts and resources to another MCP client, as one MCP server backed by the daemon",
    )
    .addOption(new Option('--stdio', 'over stdin/stdout (the default)').conflicts('http'))
    .option('--http', 'over Streamable HTTP on loopback, with a bearer token')
    .option('--port <n>', 'with --http: the port (default: any free one)', (value: string) => {
      const n = Number(value);
      if (!Number.isInteger(n) || n < 0 || n > 65535)
        throw new InvalidArgumentError('expected a port number (0-65535)');
      return n;
    })
    .option('--host <address>', 'with --http: the address to bind', '127.0.0.1')
    .option(
      '--allow-remote',
      'with --http: allow a --host that is not loopback (every served tool becomes reachable from the network by whoever has the token)',
    )
    .option(
      '--token-file <file>',
      'with --http: the bearer token is read from (or made into) this file instead of $NIFFLER_HOME',
    )
    .option(
      '--server <name>',
      "serve only this MCP server's tools, prompts and resources, under their own names",
    )
    .option('-C, --cwd <dir>', 'the repository to serve (default: the current directory)')
    .option('--json', 'with --http: print where it listens as JSON')
    .addHelpText(
      'after',
      `
Examples:
  claude mcp add niffler -- niffler mcp serve -C ~/src/app
  niffler mcp serve --http --port 8931         then: Authorization: Bearer <token>
  niffler mcp serve --server github            one warm server, its own tool names`,
    )
    .action(async (_opts, command: Command) =>
      (await import('./commands/mcp-serve.ts')).mcpServe(globals(command)),
    );
};

/** `mcp add|remove`: servers in the repository (or global) config. */
const addMcpConfigEdits = (mcp: Command): void => {
  mcp
    .command('add <name> [command...]')
    .description(
      'add a server to the repo (or global) config: add NAME -- COMMAND ARGS…, or add NAME --url URL',
    )
    .option('--scope <scope>', 'repo or global', 'repo')
    .option('--url <url>', 'a remote server (Streamable HTTP, SSE or ws://)')
    .option('--transport <kind>', 'stdio | http | sse | ws (inferred when absent)')
    .option('--header <k:v>', 'an HTTP header (repeatable)', collect)
    .option('--env <k=v>', 'an environment variable for the server (repeatable)', collect)
    .option('--working-dir <dir>', 'working directory of a stdio server')
    .option('--disabled', 'add it switched off')
    .option('--json', 'print JSON')
    .action(async (name: string, commandArgs: string[], _opts, command: Command) =>
      (await import('./commands/mcp-local.ts')).mcpAdd(name, commandArgs, globals(command)),
    );
  mcp
    .command('remove <name>')
    .description('remove a server from the repo (or global) config, keeping comments')
    .option('--scope <scope>', 'repo or global', 'repo')
    .option('--json', 'print JSON')
    .action(async (name: string, _opts, command: Command) =>
      (await import('./commands/mcp-local.ts')).mcpRemove(name, globals(command)),
    );
};

/** `mcp` and every command under it, in the order `niffler mcp --help` lists them. */
export const addMcpCommands = (program: Command): void => {
  const mcp = addMcpServerCommands(program);
  addMcpOfferCommands(mcp);
  addMcpServe(mcp);
  addMcpConfigEdits(mcp);
};

import { Command, InvalidArgumentError, Option } from 'commander';
import { TRUST_LEVELS } from '../main/trust/levels.ts';
import { VERSION } from '../main/version.ts';
import { MCP_SERVER_STATES } from '../workers/protocol/mcp.ts';
import { LSP_SERVER_STATES } from '../workers/protocol/lsp.ts';
import type { GlobalOptions } from './context.ts';

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/**
 * The options every command sees, its own and its parents': a global option may come before the
 * subcommand or after it (`niffler --set a=1 config show`, `niffler config show --set a=1`). A
 * value given wins over a default wherever each was; `--set` given in both places adds up.
 */
const globals = (command: Command): GlobalOptions => {
  const chain: Command[] = [];
  for (let c: Command | null = command; c; c = c.parent) chain.unshift(c);
  const out: Record<string, unknown> = {};
  for (const c of chain)
    for (const [key, value] of Object.entries(c.opts())) {
      if (c.getOptionValueSource(key) === 'default' && key in out) continue;
      out[key] =
        key === 'set' && Array.isArray(out[key]) && Array.isArray(value)
          ? [...(out[key] as string[]), ...(value as string[])]
          : value;
    }
  return out;
};

/** The options of `niffler` itself that every command takes too, before or after its name. */
const GLOBAL_OPTIONS = (): Option[] => [
  new Option('-C, --cwd <dir>', 'run as if started in <dir>'),
  new Option('-m, --model <name>', 'model to use (a key of `models` in the config)'),
  new Option(
    '--set <key=value>',
    'override a config key, e.g. --set daemon.idleMinutes=5 (repeatable)',
  ).argParser(collect),
  new Option('--no-daemon', 'run the engine in this process instead of the per-repository daemon'),
];

/** Gives every command under `program` the global options it does not have itself. */
const acceptGlobalsEverywhere = (program: Command): void => {
  const visit = (command: Command) => {
    for (const sub of command.commands) {
      const own = new Set(sub.options.map((o) => o.long));
      for (const option of GLOBAL_OPTIONS()) if (!own.has(option.long)) sub.addOption(option);
      visit(sub);
    }
  };
  visit(program);
};

/** `niffler` itself: its options, and a prompt answered in one shot or the interactive session. */
const rootCommand = (): Command => {
  const program = new Command('niffler')
    .description('An AI assistant for the terminal that lives in your git repository.')
    .version(VERSION, '-v, --version')
    .option('-C, --cwd <dir>', 'run as if started in <dir>')
    .option('-m, --model <name>', 'model to use (a key of `models` in the config)')
    .option(
      '--set <key=value>',
      'override a config key, e.g. --set daemon.idleMinutes=5 (repeatable)',
      collect,
    )
    .option('--json', 'machine-readable output')
    .option('--no-daemon', 'run the engine in this process instead of the per-repository daemon')
    .option('-p, --prompt [text]', 'one-shot: answer this prompt (or stdin) and exit')
    .option('-c, --continue', 'continue the latest session of this workspace')
    .option('-r, --resume <id>', 'resume a session (see niffler sessions)')
    .option(
      '--at-turn <n>',
      'with --resume: a new session going on from the end of turn N (what came later, compactions too, is left out)',
      (value: string) => {
        const n = Number(value);
        if (!Number.isInteger(n) || n < 1)
          throw new InvalidArgumentError('expected a turn number (1, 2, …)');
        return n;
      },
    )
    .option('-y, --yes', 'approve every tool call that the config does not deny')
    .option('-a, --agent <name>', 'agent profile: build (default), plan, review, or yours')
    .argument(
      '[prompt...]',
      'a prompt (with -p, or when stdin is not a terminal: answered in one shot)',
    )
    .action(async (words: string[], _opts, command: Command) => {
      const options = globals(command) as GlobalOptions & {
        prompt?: string | boolean;
        continue?: boolean;
        resume?: string;
        atTurn?: number;
      };
      const positional = words.join(' ').trim();
      const oneShot = options.prompt !== undefined || !process.stdin.isTTY || !process.stdout.isTTY;
      if (positional)
        options.prompt = [typeof options.prompt === 'string' ? options.prompt : '', positional]
          .filter(Boolean)
          .join(' ');
      if (oneShot) await (await import('./commands/oneshot.ts')).oneShot(options);
      else await (await import('./commands/interactive.ts')).interactive(options);
    })
    .showHelpAfterError('(run niffler --help for usage)')
    .enablePositionalOptions()
    .exitOverride();
  return program;
};

/** Examples under `niffler --help`. */
const addExamples = (program: Command): void => {
  program.addHelpText(
    'after',
    `
Examples:
  niffler                                   open the interactive session
  niffler -p "what does src/ do?"           answer once, on stdout
  niffler --continue -p "and the tests?"    go on with the latest session
  niffler mcp add memory -- npx -y @modelcontextprotocol/server-memory
  niffler mcp status                        live state of this repository's MCP servers
  niffler config show --origin              the merged config, each value with its file:line
  niffler sessions search flaky test        sessions that mention both words
  niffler --agent plan -p "how would you split src/engine?"   answer with the read-only profile`,
  );
};

/** `config show|path`, `models`, `init` and `trust`. */
const addConfigCommands = (program: Command): void => {
  const config = program.command('config').description('show and locate the configuration');
  config
    .command('show')
    .description('print the merged configuration, secrets redacted')
    .option('--origin', 'name the file (or env, flag, default) each value came from')
    .option('--json', 'print JSON')
    .action(async (_opts, command: Command) =>
      (await import('./commands/config.ts')).configShow(globals(command)),
    );
  config
    .command('path')
    .description(
      'list the config files found and used, in precedence order, and the workspace root',
    )
    .option('--json', 'print JSON')
    .action(async (_opts, command: Command) =>
      (await import('./commands/config.ts')).configPath(globals(command)),
    );

  program
    .command('models')
    .description(
      'the configured models and how each gets its tools (TOOLS: native | text | native-first), with why — for Ollama, what /api/show says — and the call syntax read from text',
    )
    .option('--json', 'print JSON')
    .action(async (_opts, command: Command) =>
      (await import('./commands/models.ts')).models(globals(command)),
    );

  program
    .command('init')
    .description('create .niffler/config.yaml and prompts at the workspace root (never overwrites)')
    .option('--json', 'print JSON')
    .action(async (_opts, command: Command) =>
      (await import('./commands/init.ts')).init(globals(command)),
    );

  program
    .command('trust')
    .description(
      'trust what this repository contributes as it stands now: its MCP servers, the settings that widen what runs, its prompt files, agents, tools, tasks, hooks and commands that run shell (a running daemon applies it at once)',
    )
    .addOption(
      new Option('--revoke', 'withdraw the trust given to this repository').conflicts('diff'),
    )
    .option('--diff', 'show what changed since you trusted it (or all of it), trusting nothing')
    .option('--json', 'print JSON')
    .action(async (_opts, command: Command) =>
      (await import('./commands/trust.ts')).trust(globals(command)),
    );
};

/** `tools` and `tools policy`. */
const addToolCommands = (program: Command): void => {
  const tools = program
    .command('tools')
    .description(
      "every tool the model can get: built-in, MCP (from the daemon) and the repository's (.niffler/tools), with where each comes from; policy: the rules that decide their calls",
    )
    .option('--json', 'print JSON')
    .action(async (_opts, command: Command) =>
      (await import('./commands/tools.ts')).toolsList(globals(command)),
    );
  tools
    .command('policy [names...]')
    .description(
      'what a call of each tool meets (allow, ask or deny) and the rule and file behind it; a deny in any config layer wins',
    )
    .option('--json', 'print JSON')
    .action(async (names: string[], _opts, command: Command) =>
      (await import('./commands/tools.ts')).toolsPolicy({ ...globals(command), names }),
    );
};

/** `agents` and `task list|run|show|history`. */
const addExtensionCommands = (program: Command): void => {
  program
    .command('agents')
    .description(
      "agent profiles: built-in (build, plan, review), yours ($NIFFLER_HOME/agents) and the repository's (.niffler/agents, .claude/agents, .opencode/agent), with their source",
    )
    .option('--json', 'print JSON')
    .action(async (_opts, command: Command) =>
      (await import('./commands/extensions.ts')).agents(globals(command)),
    );

  program
    .command('skills')
    .description(
      "Agent Skills (SKILL.md directories): the repository's (.niffler/skills, .agents/skills, .claude/skills, .gemini/skills, .opencode/skills) and yours ($NIFFLER_HOME/skills, ~/.agents/skills, ~/.claude/skills), with their source, trust, whether the model is offered each, and what is wrong with those that are not",
    )
    .option('--json', 'print JSON')
    .action(async (_opts, command: Command) =>
      (await import('./commands/extensions.ts')).skills(globals(command)),
    );

  const task = program
    .command('task')
    .description(
      'tasks: named prompts (or commands) with an agent, model and inputs, run by hand or on a cron schedule by the daemon (.niffler/tasks, $NIFFLER_HOME/tasks)',
    );
  task
    .command('list')
    .description(
      'tasks with their schedules, next and last runs, and runs missed while no daemon ran',
    )
    .option('--json', 'print JSON')
    .action(async (_opts, command: Command) =>
      (await import('./commands/tasks.ts')).taskList(globals(command)),
    );
  task
    .command('run <name>')
    .description('run a task now, as a session of its own that never asks; prints its answer')
    .option('--input <k=v>', 'an input of the task (repeatable)', collect)
    .option('--json', 'print JSON')
    .action(async (name: string, opts: { input?: string[] }, command: Command) =>
      (await import('./commands/tasks.ts')).taskRun(name, { ...globals(command), ...opts }),
    );
  task
    .command('show <name>')
    .description("a task's definition: prompt, agent, model, inputs, schedule")
    .option('--json', 'print JSON')
    .action(async (name: string, _opts, command: Command) =>
      (await import('./commands/tasks.ts')).taskShow(name, globals(command)),
    );
  task
    .command('history <name>')
    .description("a task's runs, oldest first, scheduled runs missed while no daemon ran included")
    .option('--json', 'print JSON')
    .action(async (name: string, _opts, command: Command) =>
      (await import('./commands/tasks.ts')).taskHistory(name, globals(command)),
    );
};

/** `undo` and `sessions [search]`. */
const addSessionCommands = (program: Command): void => {
  program
    .command('undo')
    .description(
      "put back the files a turn changed (the last that changed any, by default; bash's changes too), after showing the diff",
    )
    .option('--turn <n>', 'the turn to undo', (value: string) => {
      const n = Number(value);
      if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a turn number');
      return n;
    })
    .option('--session <id>', 'the session (default: the latest of this workspace)')
    .option('-y, --yes', 'undo without asking')
    .option('--json', 'print JSON')
    .action(async (_opts, command: Command) =>
      (await import('./commands/undo.ts')).undo(globals(command)),
    );

  const sessions = program
    .command('sessions')
    .description(
      "this workspace's sessions, newest first (resume with --resume ID); sessions search WORDS finds them by what was said",
    )
    .option('--json', 'print JSON')
    .action(async (_opts, command: Command) =>
      (await import('./commands/sessions.ts')).sessions(globals(command)),
    );
  sessions
    .command('show [id]')
    .description(
      'a session (the latest by default): what it is and what its next request weighs; --context: that request part by part (system prompt, instruction files, tool definitions, summary, turns) in tokens and as a share of the window, the compactions made and the files holding cleared outputs',
    )
    .option('--context', 'what the next request holds, part by part')
    .option('--json', 'print JSON: {session, context}')
    .action(async (id: string | undefined, opts: { context?: boolean }, command: Command) =>
      (await import('./commands/sessions.ts')).showSession(id, { ...globals(command), ...opts }),
    );
  sessions
    .command('search <text...>')
    .description(
      'sessions whose titles, prompts, answers or tool names hold every word of TEXT, newest first',
    )
    .option('-n, --limit <n>', 'how many to show (default 20, at most 1000)', (value: string) => {
      const n = Number(value);
      if (!Number.isInteger(n) || n < 1 || n > 1000)
        throw new InvalidArgumentError('expected a whole number from 1 to 1000');
      return n;
    })
    .option('--json', 'print JSON: {hits: [{id, title, updatedAt, snippet}], problems}')
    .action(async (text: string[], _opts, command: Command) =>
      (await import('./commands/sessions.ts')).searchSessions(text.join(' '), globals(command)),
    );
};

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

/** `lsp status`: the language servers the daemon keeps warm. */
const addLspCommands = (program: Command): void => {
  const lsp = program
    .command('lsp')
    .description(
      "the language servers the daemon keeps warm: diagnostics after each edit, and the model's lsp tool",
    );
  lsp
    .command('status')
    .description(
      `each language server: state (${LSP_SERVER_STATES.join(' | ')}), pid, files open, last diagnostics, restarts, and why one does not run`,
    )
    .option('--json', 'print JSON')
    .action(async (_opts, command: Command) =>
      (await import('./commands/lsp.ts')).lspStatus(globals(command)),
    );
};

/** `daemon status|stop|restart|run`. */
const addDaemonCommands = (program: Command): void => {
  const daemon = program
    .command('daemon')
    .description('the per-repository daemon that keeps MCP servers warm');
  daemon
    .command('status')
    .description(
      "pid, uptime, root, socket, clients, memory and config files of this repository's daemon",
    )
    .option('--json', 'print JSON')
    .action(async (_opts, command: Command) =>
      (await import('./commands/daemon.ts')).daemonStatus(globals(command)),
    );
  daemon
    .command('stop')
    .description('stop the daemon and every server it started')
    .option('--force', 'kill it (and its servers) if it does not respond or does not stop in 5 s')
    .option('--json', 'print JSON')
    .action(async (opts: { force?: boolean }, command: Command) =>
      (await import('./commands/daemon.ts')).daemonStop({ ...globals(command), ...opts }),
    );
  daemon
    .command('restart')
    .description('stop the daemon (killing it if it does not respond) and start a new one')
    .option('--json', 'print JSON')
    .action(async (_opts, command: Command) =>
      (await import('./commands/daemon.ts')).daemonRestart(globals(command)),
    );
  daemon
    .command('run')
    .description('run the daemon in the foreground')
    .option('--root <dir>', 'workspace root (default: discovered from the current directory)')
    .action(async (_opts, command: Command) =>
      (await import('./commands/daemon.ts')).daemonRun(globals(command)),
    );
};

/** Builds the command tree; each action imports its command module only when it runs. */
export const buildProgram = (): Command => {
  const program = rootCommand();
  addExamples(program);
  addConfigCommands(program);
  addToolCommands(program);
  addExtensionCommands(program);
  addSessionCommands(program);
  const mcp = addMcpServerCommands(program);
  addMcpOfferCommands(mcp);
  addMcpServe(mcp);
  addMcpConfigEdits(mcp);
  addLspCommands(program);
  addDaemonCommands(program);
  acceptGlobalsEverywhere(program);
  return program;
};

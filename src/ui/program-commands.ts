import { InvalidArgumentError, Option, type Command } from 'commander';
import { LSP_SERVER_STATES } from '../workers/protocol/lsp.ts';
import { collect, globals } from './program-options.ts';

// The command tree's groups other than `mcp`: config, tools, agents and tasks, sessions, language
// servers and the daemon. Each action imports its command module only when it runs (and the
// config commands' bundle leaves out those it never runs: keep them `./commands/*.ts` imports of a
// module in src/ui).

/** `config show|path`, `models`, `init` and `trust`. */
export const addConfigCommands = (program: Command): void => {
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
export const addToolCommands = (program: Command): void => {
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
export const addExtensionCommands = (program: Command): void => {
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
      (await import('./commands/task-views.ts')).taskList(globals(command)),
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
      (await import('./commands/task-views.ts')).taskShow(name, globals(command)),
    );
  task
    .command('history <name>')
    .description("a task's runs, oldest first, scheduled runs missed while no daemon ran included")
    .option('--json', 'print JSON')
    .action(async (name: string, _opts, command: Command) =>
      (await import('./commands/task-views.ts')).taskHistory(name, globals(command)),
    );
};

/** `undo` and `sessions [search]`. */
export const addSessionCommands = (program: Command): void => {
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

/** `lsp status`: the language servers the daemon keeps warm. */
export const addLspCommands = (program: Command): void => {
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
export const addDaemonCommands = (program: Command): void => {
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

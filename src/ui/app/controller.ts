import type { EngineApi as EngineClient } from './deferred-client.ts';
import type { Env } from '../../main/paths.ts';
import type {
  McpServerStatus,
  ParamsOf as EngineParams,
  SessionEvent,
  SessionSpent,
} from '../../main/protocol.ts';
import { VERSION } from '../../main/version.ts';
import { isBuiltinSlash, parseSlash } from './commands.ts';
import { attachFiles } from './files.ts';
import { attachResources, expandPromptCommand, loadOffers } from './mcp-input.ts';
import { parsePromptCommand, type PromptCommand } from './mcp-offers.ts';
import { appendHistory, historyFile, loadHistory } from './input-history.ts';
import { runShell } from './shell.ts';
import { runSlash } from './slash.ts';
import { entriesFromMessages } from './state/history.ts';
import type { Action, Dialog, DialogAnswer, UiState } from './state/types.ts';
import { preloadMarkdown } from './markdown.ts';

/** What a session opened by a daemon that does not say has spent, as far as we know. */
const NOTHING_SPENT: SessionSpent = {
  turns: 0,
  usage: { inputTokens: 0, outputTokens: 0 },
  costUsd: 0,
};

export interface ControllerOptions {
  client: EngineClient;
  root: string;
  /** Where niffler was started: instruction files down to it are read. */
  cwd?: string;
  env?: Env;
  dispatch: (action: Action) => void;
  getState: () => UiState;
  /** Ends the app (unmounts Ink). */
  exit: () => void;
  session?: { resume?: string; continue?: boolean; atTurn?: number };
  model?: string;
  /** The agent profile the first session starts with (`--agent`). */
  agent?: string;
  yes?: boolean;
  /** Told each session id the UI opens (the last one is printed on exit). */
  onSession?: (sessionId: string) => void;
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/**
 * Everything the UI does with the engine: the session, turns (Esc aborts the `session/prompt`
 * request), dialogs answering the engine's questions, slash commands, `!shell`, input history.
 */
export const createController = (options: ControllerOptions) => {
  const { client, root, dispatch } = options;
  const env = options.env ?? process.env;
  const historyPath = historyFile(root, env);
  let history = loadHistory(historyPath);
  let sessionId: Promise<string> = Promise.resolve('');
  let currentSession = '';
  let turn: AbortController | null = null;
  let shell: AbortController | null = null;
  let model = options.model;
  const answers = new Map<string, (answer: DialogAnswer) => void>();
  let nextDialog = 1;
  const disposers: (() => void)[] = [];

  const notice = (level: 'info' | 'warn' | 'error', text: string) =>
    dispatch({ type: 'notice', level, text });
  const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

  /** Shows a dialog and resolves with the user's answer (or `fallback` when `signal` aborts). */
  const ask = (
    dialog: DistributiveOmit<Dialog, 'id'>,
    fallback: DialogAnswer,
    signal?: AbortSignal,
  ) =>
    new Promise<DialogAnswer>((resolve) => {
      const id = `d${nextDialog++}`;
      const settle = (answer: DialogAnswer) => {
        if (!answers.delete(id)) return;
        dispatch({ type: 'dialog-close', id });
        resolve(answer);
      };
      answers.set(id, settle);
      signal?.addEventListener('abort', () => settle(fallback), { once: true });
      dispatch({ type: 'dialog-open', dialog: { ...dialog, id } });
    });

  const open = async (
    params: {
      resume?: string;
      continue?: boolean;
      atTurn?: number;
      agent?: string;
      disabled?: string[];
    },
    note?: string,
  ) => {
    const opening = client.request('session/open', params);
    sessionId = opening.then((o) => o.sessionId);
    const opened = await opening;
    currentSession = opened.sessionId;
    options.onSession?.(opened.sessionId);
    const history = entriesFromMessages(opened.messages);
    dispatch({
      type: 'session-opened',
      sessionId: opened.sessionId,
      model: model ?? opened.model,
      history,
      spent: opened.spent ?? NOTHING_SPENT,
      ...(opened.agent ? { agent: opened.agent } : {}),
      ...(opened.disabled ? { disabled: opened.disabled } : {}),
      ...(note ? { note } : {}),
    });
    for (const warning of opened.warnings) notice('warn', warning);
    return opened;
  };

  /** The message for the model: `text` with the files and resources it mentions attached. */
  const attach = async (text: string) => {
    const files = attachFiles(root, text);
    const resources = await attachResources(client, text, options.getState().offers);
    for (const problem of [...files.problems, ...resources.problems]) notice('warn', problem);
    const blocks = resources.blocks.length ? `\n\n${resources.blocks.join('\n\n')}` : '';
    return {
      body: `${files.prompt}${blocks}`,
      attachments: [...files.attachments, ...resources.attachments],
    };
  };

  /** Runs a turn; `expand` makes the message from what the user typed (an MCP prompt). */
  const prompt = async (text: string, expand?: () => Promise<string>) => {
    if (turn) return notice('warn', 'a turn is running: wait for it, or press Esc to cancel it');
    const controller = new AbortController();
    turn = controller;
    let message: { body: string; attachments: string[] };
    try {
      message = await attach(expand ? await expand() : text);
    } catch (error) {
      turn = null;
      return notice('error', errorText(error));
    }
    const { body, attachments } = message;
    dispatch({ type: 'submit', text, attachments, now: Date.now() });
    try {
      const id = await sessionId;
      // Started with the app; a reply must not finish before it can be rendered as markdown.
      await preloadMarkdown();
      const summary = await client.request(
        'session/prompt',
        {
          sessionId: id,
          text: body,
          interactive: true,
          ...(options.cwd ? { cwd: options.cwd } : {}),
          ...(options.yes ? { yes: true } : {}),
          ...(model ? { model } : {}),
        },
        controller.signal,
      );
      dispatch({ type: 'turn-finished', summary });
    } catch (error) {
      if (controller.signal.aborted) {
        // The engine's turn-end may not arrive once the request is cancelled: say it here.
        const state = options.getState();
        if (!state.live.some((e) => e.kind === 'notice' && e.text === 'cancelled'))
          notice('warn', 'cancelled');
        dispatch({ type: 'turn-finished', summary: null });
      } else dispatch({ type: 'turn-finished', summary: null, error: errorText(error) });
    } finally {
      turn = null;
    }
  };

  const runBang = async (command: string) => {
    if (shell) return notice('warn', 'a shell command is running: wait for it, or press Esc');
    shell = new AbortController();
    dispatch({ type: 'shell-start', command });
    try {
      const result = await runShell(command, root, shell.signal);
      dispatch({ type: 'shell-end', ...result });
    } catch (error) {
      dispatch({ type: 'shell-end', output: errorText(error), exitCode: null });
    } finally {
      shell = null;
    }
  };

  // What the servers offer is listed again when it may have changed; one listing at a time.
  let listing: Promise<void> | null = null;
  let listAgain = false;
  const refreshOffers = (): void => {
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
        refreshOffers();
      });
  };

  const runPromptCommand = (text: string, command: PromptCommand) =>
    prompt(text, () => expandPromptCommand(client, command));

  /** Agent profiles and custom commands, listed again when the config or the files change. */
  const refreshExtensions = () =>
    client
      .request('extensions/list', {})
      .then(({ agents, commands }) => dispatch({ type: 'extensions', agents, commands }))
      .catch(() => undefined); // an older daemon, or a broken config: /agent says why

  /** Shift-Tab: the next primary agent profile, from the next message on. */
  const cycleAgent = async () => {
    const { agents } = options.getState().extensions;
    const primaries = agents.filter((a) => a.mode !== 'subagent').map((a) => a.name);
    if (primaries.length < 2 || turn) return;
    const at = primaries.indexOf(options.getState().agent);
    const next = primaries[(at + 1) % primaries.length]!;
    try {
      const { agent } = await client.request('session/agent', {
        sessionId: await sessionId,
        agent: next,
      });
      dispatch({ type: 'agent', agent });
    } catch (error) {
      notice('error', errorText(error));
    }
  };

  const controller = {
    /** Subscribes to the engine, opens the session, then checks servers and workspace trust. */
    start: async () => {
      disposers.push(
        client.onNotification(
          'session/event',
          ({ sessionId: id, event }: { sessionId: string; event: SessionEvent }) => {
            if (id === currentSession) dispatch({ type: 'session-event', event, now: Date.now() });
          },
        ),
        client.onNotification('mcp/status-changed', (status: McpServerStatus) => {
          const before = options.getState().servers.find((s) => s.name === status.name);
          dispatch({ type: 'server-status', status });
          if ((before?.state === 'ready') !== (status.state === 'ready')) refreshOffers();
        }),
        client.onNotification('mcp/catalog-changed', () => refreshOffers()),
        client.onNotification('config/changed', ({ ok, error, warnings }) => {
          void refreshExtensions();
          notice(
            ok ? 'info' : 'error',
            ok ? 'config reloaded' : `config not reloaded: ${error ?? 'invalid'}`,
          );
          // An edit that made the repository untrusted again says so here.
          for (const warning of warnings) notice('warn', warning);
        }),
      );
      client.onRequest('approval/ask', async (ask_, signal) => {
        const answer = await ask(
          { kind: 'approval', ask: ask_ },
          { kind: 'approval', answer: 'deny' },
          signal,
        );
        return { answer: answer.kind === 'approval' ? answer.answer : 'deny' };
      });
      client.onRequest('elicitation/ask', async ({ server, elicitation }, signal) => {
        const answer = await ask(
          { kind: 'elicitation', server, elicitation },
          { kind: 'elicitation', answer: { action: 'cancel' } },
          signal,
        );
        return answer.kind === 'elicitation' ? answer.answer : { action: 'cancel' };
      });
      client.onRequest('sampling/ask', async ({ server, summary, maxTokens }, signal) => {
        const answer = await ask(
          { kind: 'sampling', server, summary, maxTokens },
          { kind: 'sampling', approve: false },
          signal,
        );
        return { approve: answer.kind === 'sampling' && answer.approve };
      });
      dispatch({
        type: 'notice',
        level: 'info',
        text: `niffler ${VERSION} · ${root} · /help for commands`,
      });
      void refreshExtensions();
      const first = { ...options.session, ...(options.agent ? { agent: options.agent } : {}) };
      const opening = open(first).catch((error: unknown) => {
        notice('error', `could not open a session: ${errorText(error)}`);
        return undefined;
      });
      try {
        const status = await client.request('mcp/status', {});
        dispatch({ type: 'servers', servers: status.servers });
        refreshOffers();
        if (status.configError) notice('error', status.configError);
        const offer = (await opening)?.trust;
        if (offer) await (await import('./trust.ts')).offerTrust({ client, offer, ask, notice });
      } catch (error) {
        notice('error', `could not read MCP status: ${errorText(error)}`);
      }
    },
    /** What Enter does: a slash command, `!shell`, or a message for the model. */
    submit: async (raw: string) => {
      const text = raw.trim();
      if (!text) return;
      history = appendHistory(historyPath, history, raw);
      const slash = parseSlash(text);
      // A custom command (yours or the repository's) wins over an MCP prompt of the same name;
      // niffler's own commands win over both. The engine expands it.
      const custom = slash && !isBuiltinSlash(slash.name);
      const commands = options.getState().extensions.commands;
      if (custom && commands.some((c) => c.name.toLowerCase() === slash.name)) return prompt(text);
      const mcpPrompt = parsePromptCommand(text, options.getState().offers);
      if (mcpPrompt) return runPromptCommand(text, mcpPrompt);
      if (slash) {
        try {
          await runSlash(slash.name, slash.args, {
            client,
            root,
            env,
            dispatch,
            getState: options.getState,
            sessionId: () => sessionId,
            isBusy: () => turn !== null,
            open,
            setModel: (name) => (model = name),
            exit: controller.exit,
          });
        } catch (error) {
          notice('error', errorText(error));
        }
        return;
      }
      if (text.startsWith('!')) return runBang(text.slice(1).trim());
      return prompt(text);
    },
    cycleAgent,
    /** Esc: cancels the running turn or shell command; false when nothing ran. */
    cancel: (): boolean => {
      if (turn) turn.abort();
      else if (shell) shell.abort();
      else return false;
      return true;
    },
    get isBusy(): boolean {
      return turn !== null || shell !== null;
    },
    get history(): string[] {
      return history;
    },
    answer: (id: string, answer: DialogAnswer) => answers.get(id)?.(answer),
    /**
     * Values a server offers (`completion/complete`) for a prompt's argument or a resource
     * template's variable; none on any failure.
     */
    complete: async (params: EngineParams<'mcp/complete'>): Promise<string[]> => {
      try {
        return (await client.request('mcp/complete', params)).values;
      } catch {
        return []; // a server without completion, or one that failed: nothing to offer
      }
    },
    dispatch,
    exit: () => {
      turn?.abort();
      shell?.abort();
      options.exit();
    },
    get sessionId(): string {
      return currentSession;
    },
    dispose: () => {
      for (const dispose of disposers.splice(0)) dispose();
      turn?.abort();
      shell?.abort();
    },
  };
  return controller;
};

export type Controller = ReturnType<typeof createController>;

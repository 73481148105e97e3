import type { EngineApi as EngineClient } from './deferred-client.ts';
import type { Env } from '../../main/paths.ts';
import type {
  McpServerStatus,
  ParamsOf as EngineParams,
  SessionEvent,
  SessionSpent,
} from '../../main/protocol.ts';
import { VERSION } from '../../main/version.ts';
import { isBuiltinSlash, parseSlash, runSlash } from './commands.ts';
import { attachMentions } from '../attach.ts';
import { answerQuestions, Dialogs } from './dialogs.ts';
import { expandPromptCommand, offersRefresher } from './mcp-input.ts';
import { parsePromptCommand } from './mcp-offers.ts';
import { appendHistory, historyFile, loadHistory } from './input-history.ts';
import { runShell } from './shell.ts';
import { entriesFromMessages } from './state/history.ts';
import type { Action, DialogAnswer, UiState } from './state/types.ts';
import { preloadMarkdown } from './markdown.ts';
import { mark } from '../../workers/shared/timeline.ts';

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

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * Everything the UI does with the engine: the session, turns (Esc aborts the `session/prompt`
 * request), dialogs answering the engine's questions, slash commands, `!shell`, input history.
 */
export class Controller {
  readonly #client: EngineClient;
  readonly #root: string;
  readonly #env: Env;
  readonly #historyPath: string;
  #history: string[];
  #sessionId: Promise<string> = Promise.resolve('');
  #currentSession = '';
  #turn: AbortController | null = null;
  #shell: AbortController | null = null;
  #model: string | undefined;
  readonly #dialogs: Dialogs;
  readonly #disposers: (() => void)[] = [];
  readonly #refreshOffers: () => void;
  readonly dispatch: (action: Action) => void;

  constructor(private readonly options: ControllerOptions) {
    this.#client = options.client;
    this.#root = options.root;
    this.dispatch = options.dispatch;
    this.#env = options.env ?? process.env;
    this.#historyPath = historyFile(this.#root, this.#env);
    this.#history = loadHistory(this.#historyPath);
    this.#model = options.model;
    this.#dialogs = new Dialogs(this.dispatch);
    this.#refreshOffers = offersRefresher(this.#client, this.dispatch);
  }

  #notice(level: 'info' | 'warn' | 'error', text: string): void {
    this.dispatch({ type: 'notice', level, text });
  }

  readonly #open = async (params: EngineParams<'session/open'>, note?: string) => {
    mark('session/open sent');
    const opening = this.#client.request('session/open', params);
    this.#sessionId = opening.then((o) => o.sessionId);
    const opened = await opening;
    mark('session opened');
    this.#currentSession = opened.sessionId;
    this.options.onSession?.(opened.sessionId);
    this.dispatch({
      type: 'session-opened',
      sessionId: opened.sessionId,
      model: this.#model ?? opened.model,
      history: entriesFromMessages(opened.messages),
      spent: opened.spent ?? NOTHING_SPENT,
      ...(opened.agent ? { agent: opened.agent } : {}),
      ...(opened.disabled ? { disabled: opened.disabled } : {}),
      ...(note ? { note } : {}),
    });
    for (const warning of opened.warnings) this.#notice('warn', warning);
    return opened;
  };

  /** The message for the model: `text` with the files and resources it mentions attached. */
  async #attach(text: string) {
    const attached = await attachMentions(
      this.#client,
      this.#root,
      text,
      this.options.getState().offers,
    );
    for (const problem of attached.problems) this.#notice('warn', problem);
    return { body: attached.body, attachments: attached.attachments };
  }

  /** Runs a turn; `expand` makes the message from what the user typed (an MCP prompt). */
  async #prompt(text: string, expand?: () => Promise<string>): Promise<void> {
    if (this.#turn)
      return this.#notice('warn', 'a turn is running: wait for it, or press Esc to cancel it');
    const controller = new AbortController();
    this.#turn = controller;
    let message: { body: string; attachments: string[] };
    try {
      message = await this.#attach(expand ? await expand() : text);
    } catch (error) {
      this.#turn = null;
      return this.#notice('error', errorText(error));
    }
    const { body, attachments } = message;
    this.dispatch({ type: 'submit', text, attachments, now: Date.now() });
    try {
      await this.#sendPrompt(body, controller.signal);
    } catch (error) {
      if (controller.signal.aborted) {
        // The engine's turn-end may not arrive once the request is cancelled: say it here.
        const state = this.options.getState();
        if (!state.live.some((e) => e.kind === 'notice' && e.text === 'cancelled'))
          this.#notice('warn', 'cancelled');
        this.dispatch({ type: 'turn-finished', summary: null });
      } else this.dispatch({ type: 'turn-finished', summary: null, error: errorText(error) });
    } finally {
      this.#turn = null;
    }
  }

  /** Asks the engine for the turn and shows how it ended. */
  async #sendPrompt(body: string, signal: AbortSignal): Promise<void> {
    const { options } = this;
    const sessionId = await this.#sessionId;
    // Started with the app; a reply must not finish before it can be rendered as markdown.
    await preloadMarkdown();
    const summary = await this.#client.request(
      'session/prompt',
      {
        sessionId,
        text: body,
        interactive: true,
        ...(options.cwd ? { cwd: options.cwd } : {}),
        ...(options.yes ? { yes: true } : {}),
        ...(this.#model ? { model: this.#model } : {}),
      },
      signal,
    );
    this.dispatch({ type: 'turn-finished', summary });
  }

  async #runBang(command: string): Promise<void> {
    if (this.#shell)
      return this.#notice('warn', 'a shell command is running: wait for it, or press Esc');
    this.#shell = new AbortController();
    this.dispatch({ type: 'shell-start', command });
    try {
      const result = await runShell(command, this.#root, this.#shell.signal);
      this.dispatch({ type: 'shell-end', ...result });
    } catch (error) {
      this.dispatch({ type: 'shell-end', output: errorText(error), exitCode: null });
    } finally {
      this.#shell = null;
    }
  }

  /** Agent profiles and custom commands, listed again when the config or the files change. */
  #refreshExtensions(): Promise<void> {
    return this.#client
      .request('extensions/list', {})
      .then(({ agents, commands, skills }) =>
        this.dispatch({ type: 'extensions', agents, commands, skills: skills ?? [] }),
      )
      .catch(() => undefined); // an older daemon, or a broken config: /agent says why
  }

  /** Shift-Tab: the next primary agent profile, from the next message on. */
  readonly cycleAgent = async (): Promise<void> => {
    const { agents } = this.options.getState().extensions;
    const primaries = agents.filter((a) => a.mode !== 'subagent').map((a) => a.name);
    if (primaries.length < 2 || this.#turn) return;
    const at = primaries.indexOf(this.options.getState().agent);
    const next = primaries[(at + 1) % primaries.length]!;
    try {
      const { agent } = await this.#client.request('session/agent', {
        sessionId: await this.#sessionId,
        agent: next,
      });
      this.dispatch({ type: 'agent', agent });
    } catch (error) {
      this.#notice('error', errorText(error));
    }
  };

  /** The engine's notifications this UI follows. */
  #follow(): void {
    const client = this.#client;
    this.#disposers.push(
      client.onNotification(
        'session/event',
        ({ sessionId: id, event }: { sessionId: string; event: SessionEvent }) => {
          if (id === this.#currentSession)
            this.dispatch({ type: 'session-event', event, now: Date.now() });
        },
      ),
      client.onNotification('mcp/status-changed', (status: McpServerStatus) => {
        const before = this.options.getState().servers.find((s) => s.name === status.name);
        this.dispatch({ type: 'server-status', status });
        if ((before?.state === 'ready') !== (status.state === 'ready')) this.#refreshOffers();
      }),
      client.onNotification('mcp/catalog-changed', () => this.#refreshOffers()),
      client.onNotification('config/changed', ({ ok, error, warnings }) => {
        void this.#refreshExtensions();
        this.#notice(
          ok ? 'info' : 'error',
          ok ? 'config reloaded' : `config not reloaded: ${error ?? 'invalid'}`,
        );
        // An edit that made the repository untrusted again says so here.
        for (const warning of warnings) this.#notice('warn', warning);
      }),
    );
  }

  /** Subscribes to the engine, opens the session, then checks servers and workspace trust. */
  readonly start = async (): Promise<void> => {
    this.#follow();
    answerQuestions(this.#client, this.#dialogs);
    this.#notice('info', `niffler ${VERSION} · ${this.#root} · /help for commands`);
    void this.#refreshExtensions();
    const { session, agent } = this.options;
    const opening = this.#open({ ...session, ...(agent ? { agent } : {}) }).catch(
      (error: unknown) => {
        this.#notice('error', `could not open a session: ${errorText(error)}`);
        return undefined;
      },
    );
    try {
      const status = await this.#client.request('mcp/status', {});
      this.dispatch({ type: 'servers', servers: status.servers });
      this.#refreshOffers();
      if (status.configError) this.#notice('error', status.configError);
      const offer = (await opening)?.trust;
      if (offer)
        await (
          await import('./trust.ts')
        ).offerTrust({
          client: this.#client,
          offer,
          ask: this.#dialogs.ask,
          notice: (level, text) => this.#notice(level, text),
        });
    } catch (error) {
      this.#notice('error', `could not read MCP status: ${errorText(error)}`);
    }
  };

  /** What Enter does: a slash command, `!shell`, or a message for the model. */
  readonly submit = async (raw: string): Promise<void> => {
    const text = raw.trim();
    if (!text) return;
    this.#history = appendHistory(this.#historyPath, this.#history, raw);
    const slash = parseSlash(text);
    // A custom command (yours or the repository's) wins over an MCP prompt of the same name;
    // niffler's own commands win over both. The engine expands it.
    const custom = slash && !isBuiltinSlash(slash.name);
    const commands = this.options.getState().extensions.commands;
    if (custom && commands.some((c) => c.name.toLowerCase() === slash.name))
      return this.#prompt(text);
    const mcpPrompt = parsePromptCommand(text, this.options.getState().offers);
    if (mcpPrompt) return this.#prompt(text, () => expandPromptCommand(this.#client, mcpPrompt));
    if (slash) return this.#slash(slash.name, slash.args, text);
    if (text.startsWith('!')) return this.#runBang(text.slice(1).trim());
    return this.#prompt(text);
  };

  async #slash(name: string, args: string[], text: string): Promise<void> {
    try {
      await runSlash(
        name,
        args,
        {
          client: this.#client,
          root: this.#root,
          env: this.#env,
          dispatch: this.dispatch,
          getState: this.options.getState,
          sessionId: () => this.#sessionId,
          isBusy: () => this.#turn !== null,
          open: this.#open,
          setModel: (model) => (this.#model = model),
          exit: this.exit,
          send: (line) => this.#prompt(line),
        },
        text,
      );
    } catch (error) {
      this.#notice('error', errorText(error));
    }
  }

  /** Esc: cancels the running turn or shell command; false when nothing ran. */
  readonly cancel = (): boolean => {
    if (this.#turn) this.#turn.abort();
    else if (this.#shell) this.#shell.abort();
    else return false;
    return true;
  };

  get isBusy(): boolean {
    return this.#turn !== null || this.#shell !== null;
  }

  get history(): string[] {
    return this.#history;
  }

  readonly answer = (id: string, answer: DialogAnswer): void => this.#dialogs.answer(id, answer);

  /**
   * Values a server offers (`completion/complete`) for a prompt's argument or a resource
   * template's variable; none on any failure.
   */
  readonly complete = async (params: EngineParams<'mcp/complete'>): Promise<string[]> => {
    try {
      return (await this.#client.request('mcp/complete', params)).values;
    } catch {
      return []; // a server without completion, or one that failed: nothing to offer
    }
  };

  readonly exit = (): void => {
    this.#turn?.abort();
    this.#shell?.abort();
    this.options.exit();
  };

  get sessionId(): string {
    return this.#currentSession;
  }

  readonly dispose = (): void => {
    for (const dispose of this.#disposers.splice(0)) dispose();
    this.#turn?.abort();
    this.#shell?.abort();
  };
}

export const createController = (options: ControllerOptions): Controller => new Controller(options);

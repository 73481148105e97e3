import { z } from 'zod';
import { PROVIDERS, TOOL_CALL_FORMATS, TOOL_PROTOCOLS } from '../../workers/protocol/api.ts';
import { LOG_LEVELS } from '../../workers/protocol/log-level.ts';
import { MCP_PROTOCOL_SETTINGS, MCP_TRANSPORTS } from '../../workers/protocol/mcp.ts';
import { SANDBOX_MODES } from '../../workers/protocol/sandbox.ts';
import { BUILTIN_SERVERS } from './lsp-builtins.ts';
import { CLAUDE_HOOK_EVENTS, HOOK_TYPES, type ClaudeHookEvent } from './hook-events.ts';

/**
 * The parse option for what niffler parses a few times (a config at start and on each change, the
 * trust store, a repository's extensions): zod compiles a function per object schema the first
 * time it parses with it (its "JIT"), which pays back only after many parses; a daemon's cold start
 * spends ~10 ms less before its servers spawn without. Per parse, not zod's global switch: that
 * one holds for every schema made after it, the SDK's too, and the gateway parses the SDK's
 * messages thousands of times (its main thread paid ~15 % more per call with them jitless).
 */
export const PARSE_ONCE = { jitless: true } as const;

const limit = (what: string) => z.number().positive().optional().describe(what);

/** Resource limits of a command and all it starts (`ulimit`); each is off when absent. */
const LimitsSchema = z.strictObject({
  cpuSeconds: limit('CPU seconds'),
  memoryMB: limit('writable memory in MiB (heap and anonymous mappings)'),
  fileSizeMB: limit('largest file written, in MiB'),
  processes: limit("the user's processes"),
});

/** A stdio server's sandbox: what it may write besides a private /tmp, and the network. */
const ServerSandboxSchema = z.union([
  z.boolean(),
  z.strictObject({
    /** Paths it may write; relative ones are taken from the workspace root. */
    write: z.array(z.string()).default([]),
    network: z.boolean().default(false),
  }),
]);

/** One MCP server entry, in niffler's YAML or imported from Claude Desktop / `.mcp.json`. */
const McpServerSchema = z
  .strictObject({
    command: z.string().min(1).optional(),
    args: z.array(z.string()).optional(),
    env: z.record(z.string(), z.string()).optional(),
    workingDir: z.string().optional(),
    url: z
      .url({ protocol: /^(https?|wss?)$/, error: 'expected an http(s):// or ws(s):// URL' })
      .optional(),
    transport: z.enum(MCP_TRANSPORTS).optional(),
    headers: z.record(z.string(), z.string()).optional(),
    /** Seconds per call; progress notifications reset it. */
    timeout: z.number().positive().optional(),
    /** Seconds for spawn/connect + initialize + first listing. */
    startupTimeout: z.number().positive().optional(),
    enabled: z.boolean().optional(),
    /** Display name. */
    name: z.string().optional(),
    includeTools: z.array(z.string()).optional(),
    excludeTools: z.array(z.string()).optional(),
    maxConcurrency: z.number().int().positive().optional(),
    autoStart: z.boolean().optional(),
    /** Its tools are always sent whole, never deferred behind `tool_search`. */
    alwaysLoad: z.boolean().optional(),
    /** Tools of this server run without asking (like `tools.policy: { "name__*": allow }`). */
    trust: z.boolean().optional(),
    /** stdio only: run in bubblewrap (true, or what it may write and whether it has network). */
    sandbox: ServerSandboxSchema.optional(),
    /** stdio only: memory and CPU limits of the server process. */
    limits: LimitsSchema.pick({ memoryMB: true, cpuSeconds: true }).optional(),
    /** OAuth for a remote server: pre-registered client, machine grants, cross-app access. */
    oauth: z
      .strictObject({
        /**
         * authorization_code (a browser, default), client_credentials, cross_app (SEP-990), or
         * jwt_bearer (workload identity federation, SEP-1933: the workload's own JWT).
         */
        grant: z
          .enum(['authorization_code', 'client_credentials', 'cross_app', 'jwt_bearer'])
          .optional(),
        /** jwt_bearer: the workload's JWT (use ${VAR}), or a file holding it (relative to the root). */
        assertion: z.string().optional(),
        assertionFile: z.string().optional(),
        clientId: z.string().optional(),
        clientSecret: z.string().optional(),
        scopes: z.array(z.string()).optional(),
        redirectPort: z.number().int().min(0).max(65535).optional(),
        /** An https:// client ID metadata document, used where the server supports it. */
        clientMetadataUrl: z.url({ protocol: /^https$/ }).optional(),
        /** PEM (PKCS#8) key for private_key_jwt client authentication; relative to the root. */
        privateKeyFile: z.string().optional(),
        signingAlgorithm: z.string().optional(),
        /** DPoP-bound tokens (RFC 9449): unset uses them where the server offers them. */
        dpop: z.boolean().optional(),
        /** cross_app: the identity provider that exchanges an ID token for an ID-JAG. */
        idp: z
          .strictObject({
            tokenEndpoint: z.url({ protocol: /^https?$/ }),
            clientId: z.string(),
            clientSecret: z.string().optional(),
            idToken: z.string(),
          })
          .optional(),
      })
      .optional(),
    /**
     * Protocol revision: `auto` (probe with server/discover once, fall back to initialize),
     * `legacy` (initialize, 2025-11-25 and earlier), or `2026-07-28` (that revision only).
     */
    protocol: z.enum(MCP_PROTOCOL_SETTINGS).optional(),
    /** Writes every JSON-RPC message to the server's log (niffler mcp logs NAME --trace). */
    trace: z.boolean().optional(),
    /**
     * Keep results of tools the server marks read-only and idempotent: `ttlSeconds` for all of
     * them, `tools.NAME.ttlSeconds` per tool.
     */
    cache: z
      .strictObject({
        ttlSeconds: z.number().positive().optional(),
        tools: z
          .record(z.string(), z.strictObject({ ttlSeconds: z.number().positive() }))
          .optional(),
      })
      .optional(),
  })
  .superRefine((server, ctx) => {
    if (server.enabled === false) return;
    if (!server.command && !server.url)
      ctx.addIssue({
        code: 'custom',
        message: 'expected `command` (stdio) or `url` (remote), got neither',
      });
    if (server.command && server.url)
      ctx.addIssue({ code: 'custom', message: 'expected either `command` or `url`, got both' });
    if (server.transport === 'stdio' && !server.command)
      ctx.addIssue({
        code: 'custom',
        path: ['transport'],
        message: 'transport stdio needs `command`',
      });
    if (server.transport && server.transport !== 'stdio' && !server.url)
      ctx.addIssue({
        code: 'custom',
        path: ['transport'],
        message: `transport ${server.transport} needs \`url\``,
      });
  });

/**
 * One language server: the overrides of a built-in (`typescript`, `python`, `go`, `rust`), or a
 * server of your own (then `command` and `extensions` are needed).
 */
const LspServerSchema = z.strictObject({
  /** A name looked up on PATH (and, in a trusted repository, its node_modules/.bin), or a path. */
  command: z.string().min(1).optional(),
  args: z.array(z.string()).optional(),
  /** File name endings it serves (`.vue`); a built-in's own when absent. */
  extensions: z
    .array(z.string().regex(/^\.[^/\s]+$/, 'expected a file name ending such as ".vue"'))
    .min(1)
    .optional(),
  /** Sent at `initialize`; a built-in's own are merged under them. */
  initializationOptions: z.record(z.string(), z.unknown()).optional(),
  env: z.record(z.string(), z.string()).optional(),
  enabled: z.boolean().optional(),
  /** Run in bubblewrap (true, or what it may write and whether it has network). */
  sandbox: ServerSandboxSchema.optional(),
});

/**
 * `lsp:` — settings, and one entry per language server (`lsp.<name>`). A server of your own
 * needs `command` and `extensions`; a built-in's entry changes only what it names.
 */
const LspSchema = z
  .object({
    /** Language servers at all: started when a session opens in a repository with their files. */
    enabled: z.boolean().default(true),
    /** Seconds an edit's result waits, from the change, for the diagnostics of the changed files. */
    diagnosticsWait: z.number().nonnegative().max(60).default(3),
    /** Warnings an edit introduces are given to the model too (errors always are). */
    warnings: z.boolean().default(false),
  })
  .catchall(LspServerSchema)
  .superRefine((lsp, ctx) => {
    for (const [name, entry] of Object.entries(lsp)) {
      if (typeof entry !== 'object' || name in BUILTIN_SERVERS || entry.enabled === false) continue;
      for (const key of ['command', 'extensions'] as const)
        if (!entry[key])
          ctx.addIssue({
            code: 'custom',
            path: [name, key],
            message: `lsp.${name} is not a built-in server (${Object.keys(BUILTIN_SERVERS).join(', ')}): it needs \`${key}\``,
          });
    }
  });

const PriceSchema = z.strictObject({
  /** US dollars per million input tokens. */
  input: z.number().nonnegative(),
  /** US dollars per million output tokens. */
  output: z.number().nonnegative(),
});

export const ModelSchema = z.strictObject({
  provider: z.enum(PROVIDERS),
  baseUrl: z.url({ protocol: /^https?$/, error: 'expected an http(s):// URL' }).optional(),
  /** The model id sent to the provider. */
  model: z.string().min(1),
  /** Name of the environment variable holding the API key (never the key itself). */
  apiKeyEnv: z.string().optional(),
  toolProtocol: z.enum(TOOL_PROTOCOLS).default('auto'),
  /** The call syntax read from text when a server passes calls through as text (absent: `auto`). */
  toolCallFormat: z.enum(TOOL_CALL_FORMATS).optional(),
  contextWindow: z.number().int().positive().optional(),
  maxTokens: z.number().int().positive().optional(),
  temperature: z.number().min(0).max(2).optional(),
  vision: z.boolean().optional(),
  reasoning: z.boolean().optional(),
  headers: z.record(z.string(), z.string()).optional(),
  prices: PriceSchema.optional(),
});

export const PolicySchema = z.enum(['allow', 'ask', 'deny']);

export const ToolsSchema = z.strictObject({
  /** Per tool, by name or glob (`memory__*`): allow | ask | deny. */
  policy: z.record(z.string(), PolicySchema).default({}),
  /** Directories outside the workspace root that file tools may use. */
  allowedPaths: z.array(z.string()).default([]),
  bash: z
    .strictObject({
      /** Seconds; the model may ask for up to `maxTimeout`. */
      timeout: z.number().positive().default(120),
      maxTimeout: z.number().positive().default(600),
      /** auto: bubblewrap where it runs (else says once it cannot); bwrap: required; off. */
      sandbox: z.enum(SANDBOX_MODES).default('auto'),
      /** Whether a sandboxed command may use the network. */
      network: z.boolean().default(false),
      limits: LimitsSchema.prefault({}),
      /** Variables of niffler's environment passed on besides PATH, HOME, USER, LANG, … */
      passEnv: z
        .array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected a variable name'))
        .default([]),
    })
    .prefault({}),
  /**
   * MCP tool definitions deferred behind `tool_search`: `auto` once they pass a tenth of the
   * model's context window, or all the tool definitions 15 % of it (and on a window too small even
   * then, the optional built-ins too), `always`, or `never`.
   */
  search: z.enum(['auto', 'always', 'never']).default('auto'),
  /** What one grep or glob may take. */
  searchLimits: z
    .strictObject({
      /**
       * Seconds a grep or glob searches: then it answers with what it found, marked incomplete
       * (a pattern stuck on one file is ended well before).
       */
      timeout: z.number().positive().default(30),
      /** No longer used: a search covers the workspace (read, with a warning, for old configs). */
      maxFiles: z.number().int().positive().optional(),
      /** No longer used: a search covers the workspace (read, with a warning, for old configs). */
      maxBytes: z.number().int().positive().optional(),
    })
    .prefault({}),
  fetch: z
    .strictObject({
      /** Hosts, addresses or CIDR ranges of loopback/private networks fetched without asking. */
      allowPrivate: z.array(z.string()).default([]),
    })
    .prefault({}),
  output: z
    .strictObject({
      /** Characters of tool output given to the model before the rest is saved to a file. */
      maxChars: z.number().int().positive().default(30_000),
      /** Bytes a file tool reads at most. */
      maxFileBytes: z
        .number()
        .int()
        .positive()
        .default(10 * 1024 * 1024),
      /** Days a saved (cut) output is kept under $NIFFLER_HOME/outputs before the daemon removes it. */
      maxAgeDays: z.number().positive().default(7),
      /** Megabytes of saved outputs kept per workspace; the oldest go first. */
      maxTotalMB: z.number().positive().default(500),
    })
    .prefault({}),
  /** Built-in tools switched off entirely. */
  disabled: z.array(z.string()).default([]),
});

/**
 * `serve.clients.<clientInfo.name>`: what one MCP client of the gateway (`niffler mcp serve`) is
 * offered beyond what its capabilities decide: only the tools (or servers) `include` names,
 * none that `exclude` names (globs on model-facing names), and its own `policy` rules on top.
 */
const ServeClientSchema = z.strictObject({
  include: z.array(z.string()).optional(),
  exclude: z.array(z.string()).optional(),
  policy: z.record(z.string(), PolicySchema).optional(),
});

/**
 * One hook handler, with every field Claude Code documents: niffler runs `type: command` (shell
 * form, or exec form with `args`), honours `timeout`, `statusMessage`, `if` and `async`; the other
 * types and fields are accepted and listed by `niffler config check` as not used.
 */
const HookHandlerSchema = z
  .strictObject({
    type: z.enum(HOOK_TYPES),
    /** Shell form: a command line for bash; exec form (with `args`): the program. */
    command: z.string().min(1).optional(),
    /** Exec form: the arguments, each passed as written (no shell). */
    args: z.array(z.string()).optional(),
    /** Seconds before it is ended (default 60; Claude Code's files: 600); at most 3600. */
    timeout: z.number().positive().optional(),
    /** Shown while it runs. */
    statusMessage: z.string().optional(),
    /** A permission rule (`Bash(git *)`, `Edit(*.ts)`): tool events run it only for calls it matches. */
    if: z.string().optional(),
    /** Run without waiting for it; its output is not read. */
    async: z.boolean().optional(),
    asyncRewake: z.boolean().optional(),
    shell: z.string().optional(),
    once: z.boolean().optional(),
    url: z.string().optional(),
    headers: z.record(z.string(), z.string()).optional(),
    allowedEnvVars: z.array(z.string()).optional(),
    server: z.string().optional(),
    tool: z.string().optional(),
    input: z.record(z.string(), z.unknown()).optional(),
    prompt: z.string().optional(),
    model: z.string().optional(),
  })
  .superRefine((hook, ctx) => {
    if (hook.type === 'command' && !hook.command)
      ctx.addIssue({ code: 'custom', path: ['command'], message: 'type command needs `command`' });
  });
export type HookHandler = z.infer<typeof HookHandlerSchema>;

const HookMatcherSchema = z.strictObject({
  /**
   * What it selects, as Claude Code reads it: `*`, empty or absent for all; names (letters,
   * digits, `_`, `-`) separated by `|` or `,` exactly; else a regular expression.
   */
  matcher: z.string().optional(),
  hooks: z.array(HookHandlerSchema).min(1),
});

/**
 * `hooks:` — per event (every one Claude Code documents; those niffler has no moment for are
 * listed as not fired), matchers and the handlers they run (every file's hooks run).
 */
export const HooksSchema = z.strictObject({
  ...(Object.fromEntries(
    CLAUDE_HOOK_EVENTS.map((e) => [e, z.array(HookMatcherSchema).optional()]),
  ) as {
    [E in ClaudeHookEvent]: z.ZodOptional<z.ZodArray<typeof HookMatcherSchema>>;
  }),
  /** Also run the hooks of your own ~/.claude/settings.json (off unless you say so). */
  readClaudeSettings: z.boolean().optional(),
});
export type HooksConfig = z.infer<typeof HooksSchema>;

const DEFAULT_MODEL = 'local';

/** The whole configuration. The only place config types and defaults are defined. */
export const ConfigSchema = z.strictObject({
  /** Name of the model (a key of `models`) used by default. */
  model: z.string().min(1).default(DEFAULT_MODEL),
  models: z.record(z.string(), ModelSchema).default({}),
  mcpServers: z.record(z.string(), McpServerSchema).default({}),
  /**
   * Other assistants' files niffler reads, each on unless switched off here: Claude Code's
   * settings (hooks), Codex's config.toml, Gemini CLI's settings.json and opencode.json (servers).
   */
  peers: z
    .strictObject({
      claude: z.boolean().default(true),
      codex: z.boolean().default(true),
      gemini: z.boolean().default(true),
      opencode: z.boolean().default(true),
    })
    .prefault({}),
  tools: ToolsSchema.prefault({}),
  agent: z
    .strictObject({
      maxSteps: z.number().int().positive().default(50),
      /** The agent profile new sessions start with (build, plan, review, or one of yours). */
      default: z.string().min(1).default('build'),
      /** Subagents the `task` tool starts: how deep they nest, how many run at once, their steps. */
      subagents: z
        .strictObject({
          maxDepth: z.number().int().min(0).max(5).default(2),
          maxConcurrent: z.number().int().positive().default(4),
          maxSteps: z.number().int().positive().default(25),
        })
        .prefault({}),
      /** Branch, upstream, short status and recent commits at the end of the system prompt. */
      git: z.boolean().default(true),
      compaction: z
        .strictObject({
          /**
           * Share of the context window at which old tool outputs are cleared and older turns
           * summarized; `false`: only when a request would not fit at all.
           */
          threshold: z.union([z.number().gt(0).lt(1), z.literal(false)]).default(0.8),
          /** The model that writes summaries (a key of `models`); default: the session's. */
          model: z.string().optional(),
        })
        .prefault({}),
    })
    .prefault({}),
  daemon: z
    .strictObject({
      idleMinutes: z.number().nonnegative().default(30),
    })
    .prefault({}),
  mcp: z
    .strictObject({
      /** Default seconds per tool call. */
      timeout: z.number().positive().default(60),
      startupTimeout: z.number().positive().default(30),
      /**
       * Seconds, counted from the daemon's start, that a prompt waits for servers still starting;
       * then it goes on with the tools that are ready, says which servers are left out, and their
       * tools join a later request.
       */
      startupWait: z.number().nonnegative().default(5),
      maxConcurrency: z.number().int().positive().default(4),
      /** Run every stdio server in the sandbox unless its entry says `sandbox: false`. */
      sandboxDefault: z.boolean().default(false),
      logLevel: z
        .enum(['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'])
        .default('info'),
    })
    .prefault({}),
  lsp: LspSchema.prefault({}),
  /** The gateway: per-client overrides (`serve.clients.<clientInfo.name>`). */
  serve: z
    .strictObject({
      clients: z.record(z.string(), ServeClientSchema).default({}),
    })
    .prefault({}),
  ui: z
    .strictObject({
      theme: z.enum(['dark', 'light', 'none']).default('dark'),
      showReasoning: z.boolean().default(false),
    })
    .prefault({}),
  logLevel: z.enum(LOG_LEVELS).default('info'),
  /** Commands run on session events, in bash's sandbox; a repository's only once trusted. */
  hooks: HooksSchema.prefault({}),
});

export type Config = z.infer<typeof ConfigSchema>;

let defaults: Config | undefined;
/** The config of a workspace that has none: every key at its schema default (made once). */
export const defaultConfig = (): Config => (defaults ??= ConfigSchema.parse({}, PARSE_ONCE));
export type McpServerConfig = z.infer<typeof McpServerSchema>;
export type LspServerConfig = z.infer<typeof LspServerSchema>;
export type ModelConfig = z.infer<typeof ModelSchema>;
export type ToolPolicy = z.infer<typeof PolicySchema>;

/** The built-in default model: a local Ollama with a tool-capable model. */
export const DEFAULT_MODELS: Record<string, z.input<typeof ModelSchema>> = {
  [DEFAULT_MODEL]: {
    provider: 'ollama',
    baseUrl: 'http://localhost:11434',
    model: 'qwen3:8b',
    toolProtocol: 'auto',
  },
};

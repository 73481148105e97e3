import {
  DEFAULT_MODELS,
  ModelSchema,
  type Config,
  type ModelConfig,
} from '../../main/config/schema.ts';
import { NifflerError } from '../../main/errors.ts';
import { resolveModelSpec } from '../../main/threads/api.ts';
import { probeOllama, type ToolDecision } from '../../workers/api/ollama-show.ts';
import type { ModelSpec, ToolCallFormat } from '../../workers/protocol/api.ts';
import { loadForCommand, type GlobalOptions } from '../context.ts';
import { formatTable, print, printJson, warn } from '../render/output.ts';

// `niffler models`: the configured models, and how each gets its tools — what `auto` decides
// (for Ollama, from /api/show, as the API worker does before a model's first request) and why.

interface ModelRow {
  name: string;
  default: boolean;
  provider: ModelConfig['provider'];
  model: string;
  baseUrl: string;
  toolProtocol: ModelConfig['toolProtocol'];
  toolCallFormat: ToolCallFormat;
  /** How tools reach the model: `native`, `text`, or `native-first` (auto, undecided). */
  tools: 'native' | 'text' | 'native-first';
  /** The call syntax looked for first when calls come as text. */
  family?: string;
  reason: string;
}

const configured = (entry: ModelConfig, model: string): ToolDecision => ({
  protocol: entry.toolProtocol === 'text' ? 'text' : 'native',
  reason:
    entry.toolProtocol === 'text'
      ? `toolProtocol: text in the config: ${model} is taught the TOOL_CALL: protocol`
      : `toolProtocol: native in the config`,
});

/** The decision for one model, asking Ollama when `auto` leaves it to the server. */
const decide = async (entry: ModelConfig, spec: ModelSpec): Promise<ToolDecision> => {
  if (entry.toolProtocol !== 'auto') return configured(entry, entry.model);
  if (entry.provider === 'ollama') return probeOllama(spec);
  const who = entry.provider === 'openai' ? 'the server' : 'the API';
  return {
    reason: `auto: native tools first; the text protocol if ${who} says the model has none`,
  };
};

const rowOf = async (name: string, entry: ModelConfig, config: Config): Promise<ModelRow> => {
  let baseUrl = entry.baseUrl ?? '';
  let decision: ToolDecision;
  try {
    const spec = resolveModelSpec(config, name);
    baseUrl = spec.baseUrl;
    decision = await decide(entry, spec);
  } catch (error) {
    decision = { reason: error instanceof NifflerError ? error.message : String(error) };
  }
  return {
    name,
    default: name === config.model,
    provider: entry.provider,
    model: entry.model,
    baseUrl,
    toolProtocol: entry.toolProtocol,
    toolCallFormat: entry.toolCallFormat ?? 'auto',
    tools: decision.protocol ?? 'native-first',
    ...(decision.family ? { family: decision.family } : {}),
    reason: decision.reason,
  };
};

/** Every model the config names (the built-in default included), the default first. */
const modelRows = async (config: Config): Promise<ModelRow[]> => {
  const entries = new Map<string, ModelConfig>(
    Object.entries(DEFAULT_MODELS).map(([name, input]) => [name, ModelSchema.parse(input)]),
  );
  for (const [name, entry] of Object.entries(config.models)) entries.set(name, entry);
  const names = [...entries.keys()].sort((a, b) =>
    a === config.model ? -1 : b === config.model ? 1 : a.localeCompare(b),
  );
  return Promise.all(names.map((name) => rowOf(name, entries.get(name)!, config)));
};

/** `niffler models [--json]`. */
export const models = async (options: GlobalOptions): Promise<void> => {
  const { config } = loadForCommand(options);
  const rows = await modelRows(config);
  if (options.json) return printJson(rows);
  if (!rows.some((r) => r.name === config.model))
    warn(`model "${config.model}" is not configured; add it under \`models:\``);
  print(
    formatTable(
      ['NAME', 'PROVIDER', 'MODEL', 'TOOLS', 'CALLS AS TEXT'],
      rows.map((r) => [
        `${r.name}${r.default ? ' *' : ''}`,
        r.provider,
        r.model,
        r.tools,
        r.toolCallFormat === 'auto' && r.family ? `auto (${r.family} first)` : r.toolCallFormat,
      ]),
    ),
  );
  print('');
  for (const r of rows) print(`${r.name}: ${r.reason}`);
  print('\n* the default model. Force a call syntax with models.<name>.toolCallFormat.');
};

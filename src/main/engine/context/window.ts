import type { ModelSpec } from '../../../workers/protocol/api.ts';
import type { WindowSource } from '../../protocol.ts';
import { Calibrations } from './tokens.ts';

// A model's context window: from the config (`models.x.contextWindow`), else from the provider
// (Ollama's /api/show, a vLLM-style /v1/models entry), else by the hosted family it belongs to,
// else a conservative default. Asked once per model and daemon.

/** Tokens assumed when nothing better is known. */
const DEFAULT_WINDOW = 16_384;
/**
 * Ollama allocates the whole window up front: a model's trained maximum (128k for many) can
 * exhaust a laptop. What /api/show reports is capped here; `contextWindow` in the config goes higher.
 */
const OLLAMA_AUTO_CAP = 32_768;

/** Known hosted families, by a pattern of the model id. First match wins. */
const FAMILIES: [RegExp, number][] = [
  [/^claude-/i, 200_000],
  [/^gpt-4\.1/i, 1_000_000],
  [/^gpt-5/i, 400_000],
  [/^(o1|o3|o4)/i, 200_000],
  [/^gpt-4o|^gpt-4-turbo/i, 128_000],
  [/^gpt-3\.5/i, 16_385],
  [/^deepseek/i, 128_000],
  [/^gemini/i, 1_000_000],
  [/^(llama-?3\.[1-3]|llama3\.[1-3])/i, 128_000],
  [/^qwen3/i, 40_960],
  [/^qwen2\.5/i, 32_768],
  [/^mistral-large/i, 128_000],
];

const TIMEOUT_MS = 2000;

const postJson = async (
  url: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<unknown> => {
  const response = await fetch(url, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  return response.ok ? ((await response.json()) as unknown) : undefined;
};

/** Ollama: `model_info["<arch>.context_length"]` of /api/show. */
const fromOllama = async (spec: ModelSpec): Promise<number | undefined> => {
  const info = (await postJson(
    `${spec.baseUrl}/api/show`,
    { model: spec.model },
    spec.headers ?? {},
  )) as { model_info?: Record<string, unknown> } | undefined;
  const length = Object.entries(info?.model_info ?? {}).find(([key]) =>
    key.endsWith('.context_length'),
  )?.[1];
  return typeof length === 'number' && length > 0 ? Math.min(length, OLLAMA_AUTO_CAP) : undefined;
};

/** vLLM and others list `max_model_len` in their OpenAI-compatible /v1/models. */
const fromModels = async (spec: ModelSpec): Promise<number | undefined> => {
  const headers: Record<string, string> = { ...(spec.headers ?? {}) };
  if (spec.apiKey) headers['Authorization'] = `Bearer ${spec.apiKey}`;
  const list = (await postJson(`${spec.baseUrl}/models`, undefined, headers)) as
    { data?: { id?: string; max_model_len?: unknown }[] } | undefined;
  const length = list?.data?.find((m) => m.id === spec.model)?.max_model_len;
  return typeof length === 'number' && length > 0 ? length : undefined;
};

const OFFICIAL = /(^|\.)(openai\.com|anthropic\.com)$/;

/** Where a window came from, for `/context`. */

/** Resolves and caches context windows for one daemon, and how each model counts tokens. */
export class ContextWindows {
  /** Each model's calibration, learnt from its reports: shared by the daemon's sessions. */
  readonly calibrations = new Calibrations();
  readonly #cache = new Map<string, Promise<{ tokens: number; source: WindowSource }>>();

  /** The window of `spec`, and where it came from; `configured` is `models.x.contextWindow`. */
  resolve(spec: ModelSpec, configured?: number): Promise<{ tokens: number; source: WindowSource }> {
    if (configured) return Promise.resolve({ tokens: configured, source: 'config' });
    const key = `${spec.provider} ${spec.baseUrl} ${spec.model}`;
    let found = this.#cache.get(key);
    if (!found) {
      found = this.#lookup(spec);
      this.#cache.set(key, found);
    }
    return found;
  }

  async #lookup(spec: ModelSpec): Promise<{ tokens: number; source: WindowSource }> {
    const host = new URL(spec.baseUrl).hostname;
    const asked = OFFICIAL.test(host)
      ? undefined
      : await (
          spec.provider === 'ollama'
            ? fromOllama(spec)
            : spec.provider === 'openai'
              ? fromModels(spec)
              : undefined
        )?.catch(() => undefined);
    if (asked) return { tokens: asked, source: 'provider' };
    const family = FAMILIES.find(([pattern]) => pattern.test(spec.model))?.[1];
    return family
      ? { tokens: family, source: 'family' }
      : { tokens: DEFAULT_WINDOW, source: 'default' };
  }
}

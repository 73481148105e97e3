import type { ModelSpec, ToolCallFamily } from '../protocol/api.ts';
import { isObject } from '../shared/is-object.ts';
import { errorMessage } from './providers/http.ts';

// What Ollama says of a model (`POST /api/show`): its capabilities and its chat template. `auto`
// reads them once per model to choose native tools or the text protocol before the first request
// (instead of learning it from a refused one), and which call syntax to look for first.

/** What was decided for a model, and why, in words `niffler models` prints. */
export interface ToolDecision {
  /** Undefined when Ollama could not say: native first, the text protocol if it refuses tools. */
  protocol?: 'native' | 'text';
  /** The call syntax its template writes, tried first when calls come as text. */
  family?: ToolCallFamily;
  reason: string;
}

/** Markers of each family's call syntax in a chat template, most specific first. */
const TEMPLATE_MARKERS: [string, ToolCallFamily][] = [
  ['<|channel|>', 'harmony'],
  ['<arg_key>', 'glm'],
  ['<parameter=', 'qwen3-coder'],
  ['<tool_call>', 'hermes'],
  ['[TOOL_CALLS]', 'mistral'],
  ['tool▁calls▁begin', 'deepseek'],
  ['<|tool_calls_section_begin|>', 'kimi'],
  ['<minimax:tool_call>', 'minimax'],
  ['<|tool_call|>', 'granite'],
  ['functools[', 'phi4'],
  ['<|START_ACTION|>', 'command-r'],
  ['<|python_start|>', 'pythonic'],
  ['<|python_tag|>', 'llama3'],
  ['tool_code', 'gemma'],
  ['>>>', 'functionary'],
];

/** The family a chat template writes calls in, if it names one. */
const templateFamily = (template: string): ToolCallFamily | undefined =>
  TEMPLATE_MARKERS.find(([marker]) => template.includes(marker))?.[1];

/** The decision for a `/api/show` answer about `model`. */
export const decideFromShow = (model: string, show: unknown): ToolDecision => {
  const body = isObject(show) ? show : {};
  const template = typeof body['template'] === 'string' ? body['template'] : '';
  const caps = Array.isArray(body['capabilities']) ? body['capabilities'].map(String) : undefined;
  const family = templateFamily(template);
  const writes = family ? `; its template writes calls as ${family}` : '';
  if (caps) {
    const listed = caps.join(', ') || 'none';
    if (caps.includes('tools'))
      return {
        protocol: 'native',
        ...(family ? { family } : {}),
        reason: `Ollama lists "tools" among ${model}'s capabilities (${listed})${writes}`,
      };
    return {
      protocol: 'text',
      ...(family ? { family } : {}),
      reason: `Ollama lists no "tools" among ${model}'s capabilities (${listed})`,
    };
  }
  // Ollama before 0.6.4 has no capabilities: a template that renders tools takes them.
  if (/\.Tools\b/.test(template))
    return {
      protocol: 'native',
      ...(family ? { family } : {}),
      reason: `${model}'s template renders .Tools${writes}`,
    };
  return {
    protocol: 'text',
    reason: `${model}'s template has no tools (Ollama reports no capabilities)`,
  };
};

/** Asks `/api/show` about `spec`'s model; the decision, or why Ollama could not say. */
export const probeOllama = async (spec: ModelSpec, signal?: AbortSignal): Promise<ToolDecision> => {
  const url = `${spec.baseUrl.replace(/\/+$/, '')}/api/show`;
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        ...(spec.apiKey ? { Authorization: `Bearer ${spec.apiKey}` } : {}),
        ...spec.headers,
      },
      body: JSON.stringify({ model: spec.model }),
      signal: AbortSignal.any([AbortSignal.timeout(10_000), ...(signal ? [signal] : [])]),
    });
    if (!response.ok) {
      const why = await errorMessage(response);
      const next = response.status === 404 ? ` (pull it: ollama pull ${spec.model})` : '';
      return {
        reason: `Ollama at ${spec.baseUrl} could not show ${spec.model}: HTTP ${response.status} ${why}${next}; native tools first`,
      };
    }
    return decideFromShow(spec.model, await response.json());
  } catch (error) {
    signal?.throwIfAborted();
    const cause = (error as { cause?: { code?: unknown } }).cause?.code;
    const why =
      cause === 'ECONNREFUSED'
        ? 'nothing answers there: is Ollama running? (ollama serve)'
        : (error as Error).message;
    return { reason: `could not ask ${url}: ${why}; native tools first` };
  }
};

const decisions = new Map<string, Promise<ToolDecision>>();

/** `probeOllama`, asked once per server and model for the worker's life. */
export const ollamaDecision = (spec: ModelSpec, signal?: AbortSignal): Promise<ToolDecision> => {
  const key = `${spec.baseUrl} ${spec.model}`;
  let decision = decisions.get(key);
  if (!decision) {
    decision = probeOllama(spec, signal);
    decisions.set(key, decision);
    // What Ollama could not say (it was down, the model not pulled yet) is asked again next time.
    decision.then(
      (d) => d.protocol === undefined && decisions.delete(key),
      () => decisions.delete(key),
    );
  }
  return decision;
};

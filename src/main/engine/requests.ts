import type { McpElicitation, McpSamplingParams } from '../../workers/protocol/mcp.ts';

type Content = Record<string, string | number | boolean | string[]>;

/** The answer to a form elicitation built from the schema's defaults (used with `--yes`). */
export const applyElicitationDefaults = (elicitation: McpElicitation): Content => {
  const properties = (elicitation.requestedSchema['properties'] ?? {}) as Record<
    string,
    { default?: unknown }
  >;
  const content: Content = {};
  for (const [key, property] of Object.entries(properties)) {
    const value = property.default;
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
      content[key] = value;
    else if (Array.isArray(value) && value.every((v) => typeof v === 'string'))
      content[key] = value;
  }
  return content;
};

/** One line saying what a server wants the model to do, for the approval prompt. */
export const summarizeSampling = (params: McpSamplingParams): string => {
  const last = params.messages.at(-1);
  const content = last?.content as { type?: string; text?: string } | undefined;
  const text = content?.type === 'text' && content.text ? content.text : '(non-text content)';
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
};

import type { ToolPolicy } from '../config/schema.ts';
import type { PolicyLayer } from '../config/load.ts';
import { matchesName } from '../name-glob.ts';

export type { PolicyLayer } from '../config/load.ts';

/** The rule that decided, and where it was written. */
interface PolicyMatch {
  decision: ToolPolicy;
  pattern: string;
  source: string;
}

const SEVERITY: Record<ToolPolicy, number> = { allow: 0, ask: 1, deny: 2 };

/**
 * The entry of `rules` that applies to `tool`: an exact name first, then the longest matching
 * glob; between equally long globs the strictest answer wins.
 */
export const matchRule = <T extends string>(
  rules: Readonly<Record<string, T>>,
  tool: string,
): { pattern: string; value: T } | undefined => {
  const exact = rules[tool];
  if (exact !== undefined) return { pattern: tool, value: exact };
  let best: { pattern: string; value: T } | undefined;
  for (const [pattern, value] of Object.entries(rules)) {
    if (!matchesName(tool, pattern)) continue;
    const better =
      !best ||
      pattern.length > best.pattern.length ||
      (pattern.length === best.pattern.length &&
        (SEVERITY[value as ToolPolicy] ?? 0) > (SEVERITY[best.value as ToolPolicy] ?? 0));
    if (better) best = { pattern, value };
  }
  return best;
};

/**
 * What the layers say of `tool`, composed by tightening: a `deny` in any layer wins, whatever
 * the layers above say; otherwise the highest layer with a rule for it decides. (A repository's
 * `allow` reaches here only while the repository is trusted: the config loader drops it before.)
 */
export const composePolicy = (
  layers: readonly PolicyLayer[],
  tool: string,
): PolicyMatch | undefined => {
  let top: PolicyMatch | undefined;
  for (const layer of layers) {
    const rule = matchRule(layer.rules, tool);
    if (!rule) continue;
    const match = { decision: rule.value, pattern: rule.pattern, source: layer.source };
    if (rule.value === 'deny') return match;
    top = match;
  }
  return top;
};

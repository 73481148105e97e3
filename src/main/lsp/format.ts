import type { LspFileOutcome } from '../../workers/protocol/lsp.ts';
import type { ToolResult } from '../../workers/protocol/tool-result.ts';
import { diagnosticLine } from '../../workers/shared/diagnostic-line.ts';

/** The most diagnostic lines added to one tool result, and the most characters they take. */
const MAX_LINES = 20;
const MAX_CHARS = 4000;

/**
 * What an edit's result carries of its diagnostics, for front-ends (`data.diagnostics`): how many
 * errors and warnings the change brought, and their lines (the first is the card's).
 */
interface ResultDiagnostics {
  errors: number;
  warnings: number;
  lines: string[];
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** `2 new errors` / `1 error and 1 warning` — what a file's header says. */
const countWords = (outcome: LspFileOutcome): string => {
  const errors = outcome.introduced.filter((d) => d.severity === 'error').length;
  const warnings = outcome.introduced.length - errors;
  const parts = [errors ? plural(errors, 'error') : '', warnings ? plural(warnings, 'warning') : '']
    .filter(Boolean)
    .join(' and ');
  return outcome.baseline ? parts.replace(/(\d+) /g, '$1 new ') : parts;
};

/**
 * The result with what its change brought in the changed files appended (and in
 * `data.diagnostics`); unchanged when the servers found nothing new, or did not answer in time.
 */
export const withDiagnostics = (result: ToolResult, outcomes: LspFileOutcome[]): ToolResult => {
  const found = outcomes.filter((o) => o.outcome === 'checked' && o.introduced.length > 0);
  if (!found.length) return result;
  const lines: string[] = [];
  let chars = 0;
  let left = 0;
  for (const outcome of found) {
    const head = `[${outcome.server}] ${countWords(outcome)} in ${outcome.file}${outcome.baseline ? '' : ' after this change'}:`;
    lines.push(head);
    for (const d of outcome.introduced) {
      const line = diagnosticLine(d);
      if (lines.length >= MAX_LINES + found.length || chars + line.length > MAX_CHARS) left++;
      else {
        lines.push(line);
        chars += line.length;
      }
    }
  }
  if (left) lines.push(`(+${left} more: the lsp tool's diagnostics operation lists them all)`);
  const all = found.flatMap((o) => o.introduced);
  const diagnostics: ResultDiagnostics = {
    errors: all.filter((d) => d.severity === 'error').length,
    warnings: all.filter((d) => d.severity !== 'error').length,
    lines: all.map(diagnosticLine),
  };
  const text = lines.join('\n');
  if (result.ok)
    return {
      ...result,
      output: `${result.output}\n\n${text}`,
      data: { ...result.data, diagnostics },
    };
  return { ...result, output: result.output ? `${result.output}\n\n${text}` : text };
};

import type { Diagnostic } from 'vscode-languageserver-protocol';
import type { LspDiagnostic } from '../protocol/lsp.ts';

// Diagnostics as servers give them (LSP's, or tsserver's own shape), turned into what the model
// reads, and the difference a change made.

/** The most diagnostics kept of one file (a server that sends more is cut, not trusted). */
export const MAX_FILE_DIAGNOSTICS = 1000;

const SEVERITIES = ['error', 'warning', 'info', 'hint'] as const;

/** LSP's severity (1 error … 4 hint); a diagnostic without one counts as an error. */
export const severityOf = (d: Pick<Diagnostic, 'severity'>): LspDiagnostic['severity'] =>
  SEVERITIES[(d.severity ?? 1) - 1] ?? 'error';

/** The code as it would be printed: TypeScript's numbers as `TS2322`, anything else as sent. */
export const codeOf = (d: Pick<Diagnostic, 'code' | 'source'>): string | undefined => {
  if (d.code === undefined || d.code === null || d.code === '') return undefined;
  const ts = typeof d.code === 'number' && /^(ts|typescript)$/i.test(d.source ?? '');
  return ts ? `TS${d.code}` : String(d.code);
};

/** A message as text (LSP 3.18 lets a server send markup). */
const messageOf = (d: Pick<Diagnostic, 'message'>): string =>
  typeof d.message === 'string' ? d.message : d.message.value;

/** A diagnostic for the model: 1-based line and column, the file as shown. */
export const forModel = (d: Diagnostic, file: string): LspDiagnostic => {
  const code = codeOf(d);
  return {
    file,
    line: d.range.start.line + 1,
    column: d.range.start.character + 1,
    severity: severityOf(d),
    ...(code ? { code } : {}),
    message: messageOf(d),
  };
};

/** One of tsserver's diagnostics (`semanticDiagnosticsSync` and its siblings): 1-based. */
export interface TsserverDiagnostic {
  start: { line: number; offset: number };
  end: { line: number; offset: number };
  text: string;
  code?: number;
  category?: string;
}

const TS_SEVERITY: Record<string, 1 | 2 | 3 | 4> = {
  error: 1,
  warning: 2,
  message: 3,
  suggestion: 4,
};

/** tsserver's shape in LSP's (0-based), as typescript-language-server itself converts it. */
export const fromTsserver = (d: TsserverDiagnostic): Diagnostic => ({
  range: {
    start: { line: d.start.line - 1, character: d.start.offset - 1 },
    end: { line: d.end.line - 1, character: d.end.offset - 1 },
  },
  severity: TS_SEVERITY[d.category ?? 'error'] ?? 1,
  ...(d.code !== undefined ? { code: d.code } : {}),
  source: 'typescript',
  message: d.text,
});

/** What tells two diagnostics apart across an edit, lines moving aside. */
const keyOf = (d: Diagnostic): string => `${d.severity ?? 1}|${String(d.code)}|${messageOf(d)}`;

/**
 * The diagnostics of `after` that `before` did not have, compared by severity, code and message
 * (an edit moves lines, so positions are not compared); as many of a kind as were added.
 */
export const introduced = (after: readonly Diagnostic[], before: readonly Diagnostic[]) => {
  const had = new Map<string, number>();
  for (const d of before) had.set(keyOf(d), (had.get(keyOf(d)) ?? 0) + 1);
  return after.filter((d) => {
    const left = had.get(keyOf(d)) ?? 0;
    if (left === 0) return true;
    had.set(keyOf(d), left - 1);
    return false;
  });
};

/** Orders by position, so a file's diagnostics read top to bottom. */
export const byPosition = (a: Diagnostic, b: Diagnostic): number =>
  a.range.start.line - b.range.start.line || a.range.start.character - b.range.start.character;

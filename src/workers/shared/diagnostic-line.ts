import type { LspDiagnostic } from '../protocol/lsp.ts';

/** The most of a diagnostic's message given to the model. */
const MAX_MESSAGE = 300;

/**
 * One diagnostic as the model and the user read it, the same in an edit's result and in the `lsp`
 * tool's answer: `src/a.ts:3:7 error TS2322: Type 'string' is not assignable to type 'number'.`
 */
export const diagnosticLine = (d: LspDiagnostic): string => {
  const message = d.message.replace(/\s*\n\s*/g, ' ').trim();
  const cut = message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE - 1)}…` : message;
  return `${d.file}:${d.line}:${d.column} ${d.severity}${d.code ? ` ${d.code}` : ''}: ${cut}`;
};

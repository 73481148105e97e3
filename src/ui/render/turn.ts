import { EXIT } from '../../main/errors.ts';
import type { SessionEvent, TurnSummary } from '../../main/protocol.ts';
import type { ToolResult } from '../../main/protocol.ts';
import { truncate } from './format.ts';
import { paint } from './output.ts';

const argsPreview = (args: Record<string, unknown>): string => truncate(JSON.stringify(args), 120);

/** One line saying how a tool call went, for stderr and tool cards. */
export const summarizeResult = (result: ToolResult): string => {
  if (!result.ok) return `${result.error.code}: ${result.error.message.split('\n')[0] ?? ''}`;
  const lines = result.output.split('\n').filter((l) => l.trim());
  const first = lines[0]?.trim() ?? '(no output)';
  return `${truncate(first, 100)}${lines.length > 1 ? ` (+${lines.length - 1} lines)` : ''}`;
};

/**
 * What a change's language servers found (`data.diagnostics` of an edit's result): `2 new errors:
 * src/a.ts:3:7 error TS2322: …` — the count and the first; undefined when they found nothing new.
 */
export const diagnosticsNote = (result: ToolResult): string | undefined => {
  const found = result.ok ? result.data?.['diagnostics'] : undefined;
  if (!found || typeof found !== 'object') return undefined;
  const {
    errors = 0,
    warnings = 0,
    lines = [],
  } = found as {
    errors?: number;
    warnings?: number;
    lines?: string[];
  };
  const counts = [
    errors ? `${errors} new error${errors === 1 ? '' : 's'}` : '',
    warnings ? `${warnings} new warning${warnings === 1 ? '' : 's'}` : '',
  ]
    .filter(Boolean)
    .join(', ');
  return counts ? `${counts}${lines[0] ? `: ${lines[0]}` : ''}` : undefined;
};

/** How an activated skill is told: `◆ skill pdf activated by the model (yours, ~/…/pdf, 9 files)`. */
export const skillLine = (event: Extract<SessionEvent, { type: 'skill' }>): string =>
  `◆ skill ${event.name} activated by ${event.by === 'user' ? 'you' : 'the model'} (${event.source === 'user' ? 'yours' : "the repository's"}, ${event.directory}, ${event.files} file${event.files === 1 ? '' : 's'})`;

/** The stderr line of an event other than the answer's text, or undefined for none. */
const activityLine = (event: SessionEvent): string | undefined => {
  switch (event.type) {
    case 'tool-call':
      return paint('dim', `→ ${event.name} ${argsPreview(event.args)}`);
    case 'tool-denied':
      return paint('yellow', `✗ ${event.name} denied: ${event.reason}`);
    case 'tool-result': {
      const found = diagnosticsNote(event.result);
      const line = event.result.ok
        ? paint(
            'dim',
            `✓ ${event.name} ${Math.round(event.ms)}ms: ${summarizeResult(event.result)}`,
          )
        : paint('red', `✗ ${event.name}: ${summarizeResult(event.result)}`);
      return found ? `${line}\n${paint('red', `  ⎿ ${found}`)}` : line;
    }
    case 'retry':
      return paint(
        'yellow',
        `… ${event.reason}; retry ${event.attempt} in ${(event.delayMs / 1000).toFixed(1)}s`,
      );
    case 'notice':
      return paint(event.level === 'warn' ? 'yellow' : 'dim', event.text);
    case 'skill':
      return paint('cyan', skillLine(event));
    case 'text':
    case 'tool-progress':
    case 'turn-start':
    case 'reasoning':
    case 'usage':
    case 'context':
    case 'turn-end':
      return undefined;
  }
};

/**
 * Plain one-shot rendering: the answer streams to stdout, tool activity goes to stderr (one line
 * per call), so `niffler -p … > answer.md` captures only the answer.
 */
export const createPlainRenderer = () => {
  let atLineStart = true;
  const out = (text: string) => {
    if (!text) return;
    process.stdout.write(text);
    atLineStart = text.endsWith('\n');
  };
  const err = (line: string) => {
    if (!atLineStart) {
      process.stdout.write('\n');
      atLineStart = true;
    }
    process.stderr.write(`${line}\n`);
  };
  return {
    event(event: SessionEvent): void {
      if (event.type === 'text') return out(event.text);
      const line = activityLine(event);
      if (line !== undefined) err(line);
    },
    end(summary: TurnSummary): void {
      if (!atLineStart) out('\n');
      if (summary.denied.length)
        err(
          paint(
            'yellow',
            `denied: ${[...new Set(summary.denied)].join(', ')} (run with --yes, or allow them in tools.policy)`,
          ),
        );
      if (summary.outcome === 'error' && summary.error)
        err(paint('red', `niffler: ${summary.error}`));
    },
  };
};

/** `--json`: one JSON object per line for every event, then the summary. */
export const createJsonRenderer = (sessionId: string) => ({
  event(event: SessionEvent): void {
    if (event.type === 'turn-end') return;
    process.stdout.write(JSON.stringify({ sessionId, ...event }) + '\n');
  },
  end(summary: TurnSummary): void {
    process.stdout.write(JSON.stringify({ sessionId, type: 'done', ...summary }) + '\n');
  },
});

/** The exit code of a turn that ended so. */
export const exitCodeForOutcome = (summary: TurnSummary): number =>
  ({
    answered: EXIT.ok,
    error: EXIT.failed,
    'max-steps': EXIT.maxSteps,
    cancelled: EXIT.cancelled,
  })[summary.outcome];

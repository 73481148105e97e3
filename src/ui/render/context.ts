import type { ContextReport } from '../../main/protocol.ts';
import { formatTable } from './output.ts';

// The text of a context report, for `/context` in the session and `niffler sessions show ID
// --context`: one renderer, so both say the same.

const n = (tokens: number) => tokens.toLocaleString('en-US');
const share = (tokens: number, window: number) =>
  `${((tokens / window) * 100).toFixed(1).padStart(5)}%`;

/** Compactions and cleared outputs shown at most (the JSON has all). */
const SHOWN = 10;

const WHENCE: Record<ContextReport['windowSource'], string> = {
  config: 'from the config',
  provider: 'as the provider reports it',
  family: "as the model's family has it",
  default: 'assumed: set models.<name>.contextWindow',
};

/** The report as text: the parts of the next request, then compactions and cleared outputs. */
export const contextText = (r: ContextReport): string => {
  const free = Math.max(0, r.window - r.reserve - r.total);
  const rows = [
    ...r.parts.map((p) => [p.name, n(p.tokens), share(p.tokens, r.window), p.note ?? '']),
    ['in all', n(r.total), share(r.total, r.window), ''],
    ['kept for the answer', n(r.reserve), share(r.reserve, r.window), ''],
    ['free', n(free), share(free, r.window), ''],
  ];
  const lines = [
    `The next request of session ${r.sessionId}: model ${r.model}, agent ${r.agent}`,
    `window ${n(r.window)} tokens (${WHENCE[r.windowSource]}); a request is kept under ${n(r.limit)}` +
      (r.threshold !== null
        ? `, compaction starts at ${n(r.threshold)} (agent.compaction.threshold)`
        : ' (compaction only when it must: agent.compaction.threshold is false)'),
    `tokens as the model counts them: ${r.scale} × the 4-characters-a-token estimate ` +
      (r.calibrated
        ? "(learnt from the model's reports)"
        : "(assumed until the model's first report), with a 10 % margin"),
    '',
    formatTable(['part', 'tokens', 'share', ''], rows),
  ];
  if (r.compactions.length) {
    lines.push('', `Compactions made (${r.compactions.length}):`);
    for (const c of r.compactions.slice(-SHOWN))
      lines.push(`  turn ${c.turn}, ${c.time.replace('T', ' ').slice(0, 19)}: ${c.what}`);
    if (r.compactions.length > SHOWN) lines.push(`  … ${r.compactions.length - SHOWN} earlier`);
  } else lines.push('', 'No compaction made yet.');
  if (r.clearedOutputs.length) {
    lines.push(
      '',
      `Cleared tool outputs, each in a file the model can read (${r.clearedOutputs.length}):`,
    );
    for (const o of r.clearedOutputs.slice(-SHOWN))
      lines.push(`  ${o.tool} ${n(o.tokens)} tokens: ${o.file}${o.exists ? '' : ' (missing)'}`);
    if (r.clearedOutputs.length > SHOWN)
      lines.push(`  … ${r.clearedOutputs.length - SHOWN} earlier`);
  }
  lines.push(
    '',
    '/compact [focus] compacts now; resuming at an earlier turn (--resume ID --at-turn N) undoes a compaction.',
  );
  return lines.join('\n');
};

import { NifflerError } from '../../main/errors.ts';
import type { GlobalOptions } from '../context.ts';
import { withEngine } from '../engine.ts';
import { print, printJson, warn } from '../render/output.ts';
import { exitCodeForOutcome } from '../render/turn.ts';

type TaskOptions = GlobalOptions & { input?: string[] };

const inputsOf = (pairs: string[] = []): Record<string, string> =>
  Object.fromEntries(
    pairs.map((pair) => {
      const at = pair.indexOf('=');
      if (at <= 0) throw new NifflerError('usage', `--input expects name=value, got "${pair}"`);
      return [pair.slice(0, at), pair.slice(at + 1)];
    }),
  );

/** `niffler task run NAME [--input k=v]…`: runs it now in the daemon; prints its answer. */
export const taskRun = (name: string, options: TaskOptions): Promise<void> =>
  withEngine(options, async (client) => {
    const { sessionId, summary } = await client.request('task/run', {
      name,
      inputs: inputsOf(options.input),
    });
    process.exitCode = exitCodeForOutcome(summary);
    if (options.json) return printJson({ sessionId, ...summary });
    print(summary.text || `(no answer: ${summary.outcome})`);
    if (summary.denied.length)
      warn(`denied (a task never asks; allow them in tools.policy): ${summary.denied.join(', ')}`);
    if (summary.error) warn(summary.error);
    warn(`session ${sessionId}: niffler --resume ${sessionId}`);
  });

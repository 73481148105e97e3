import { createInterface } from 'node:readline/promises';
import type { GlobalOptions } from '../context.ts';
import { withEngine } from '../engine.ts';
import { print, printJson, warn } from '../render/output.ts';

interface UndoOptions extends GlobalOptions {
  turn?: number;
  session?: string;
  yes?: boolean;
}

const confirm = async (question: string): Promise<boolean> => {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(question)).trim());
  } finally {
    rl.close();
  }
};

/**
 * `niffler undo [--turn N] [--session ID] [--yes]`: shows what a turn changed in the workspace's
 * files (the last turn that changed any, of the latest session, by default) as a diff against now,
 * then puts them back as they were before it — after a yes on a terminal, or with `--yes`.
 */
export const undo = (options: UndoOptions): Promise<void> =>
  withEngine(options, async (client) => {
    const target = {
      ...(options.session ? { sessionId: options.session } : {}),
      ...(options.turn ? { turn: options.turn } : {}),
    };
    const plan = await client.request('session/undo', { ...target, apply: false });
    if (plan.changes.length === 0) {
      if (options.json) return printJson(plan);
      return print(
        `Turn ${plan.turn} of ${plan.sessionId} left the files as they were: nothing to undo.`,
      );
    }
    const apply =
      options.yes === true ||
      (!options.json && process.stdin.isTTY === true && (await showAndAsk(plan)));
    if (!apply) {
      if (options.json) return printJson(plan);
      if (!process.stdin.isTTY) showPlan(plan);
      return print('Nothing changed. Run niffler undo --yes to put these files back.');
    }
    const done = await client.request('session/undo', { ...target, turn: plan.turn, apply: true });
    if (options.json) return printJson(done);
    print(
      `Undid turn ${done.turn}: ${done.changes.length} file(s) put back as they were before it:`,
    );
    for (const c of done.changes) print(`  ${c.change.padEnd(8)} ${c.path}`);
    // Asked on a terminal, the diff was shown before the yes; with --yes, it is shown now.
    if (options.yes && done.diff) print(`\nThe files changed like this:\n${done.diff}`);
    if (done.refused.length)
      warn(
        `not written (their directory now leads outside the workspace): ${done.refused.join(', ')}`,
      );
  });

type Plan = {
  turn: number;
  sessionId: string;
  changes: { path: string; change: string }[];
  diff: string;
};

const showPlan = (plan: Plan): void => {
  print(`Turn ${plan.turn} of session ${plan.sessionId} changed:`);
  for (const c of plan.changes) print(`  ${c.change.padEnd(8)} ${c.path}`);
  if (plan.diff) print(`\nUndoing it would change the files like this:\n${plan.diff}`);
};

const showAndAsk = async (plan: Plan): Promise<boolean> => {
  showPlan(plan);
  return confirm('Put these files back as they were before the turn? [y/N] ');
};

import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/main/extensions/workspace-config.ts';
import { SessionHooks } from '../src/main/extensions/hook-points.ts';
import type { ToolEntry, TurnIO } from '../src/main/calls/types.ts';
import { ToolsHost } from '../src/main/threads/tools.ts';
import { testEnv } from '../test/fixtures/env.ts';
import { probeBwrap } from '../src/workers/shared/sandbox-command.ts';
import { median, type Bench, type BenchResult } from './harness.ts';

// What hooks add to one tool call: a read_file through the real tools pool, with a PreToolUse
// hook alone, and with a PreToolUse and a PostToolUse hook (each a bash run in bash's sandbox
// with its JSON on stdin, as niffler runs hooks; each prints a decision, checked, so the hooks
// are known to have run and been read), against the same call without hooks; and one hook's cost
// against a bash tool call of `true` in the same sandbox. All in the same run, rounds alternating.
const ROUNDS = 40;

const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;

const PRE = `cat >/dev/null; echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"bench allows"}}'`;
const POST = `cat >/dev/null; echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"bench saw it"}}'`;
const hooksYaml = `hooks:
  PreToolUse:
    - matcher: read_file
      hooks: [{ type: command, command: ${JSON.stringify(PRE)} }]
  PostToolUse:
    - matcher: Read
      hooks: [{ type: command, command: ${JSON.stringify(POST)} }]
`;

const bench: Bench = async () => {
  const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'nf-bench-hooks-')));
  const root = path.join(base, 'repo');
  const home = path.join(base, 'h');
  mkdirSync(path.join(root, '.git'), { recursive: true });
  mkdirSync(home, { recursive: true });
  writeFileSync(path.join(home, 'config.yaml'), hooksYaml);
  writeFileSync(path.join(root, 'a.txt'), 'alpha\n');
  const env = testEnv({ HOME: base, NIFFLER_HOME: home });
  const loaded = loadConfig({ root, env });
  if (!loaded.ok) throw loaded.error;
  const bwrap = await probeBwrap();
  const host = new ToolsHost({ root, env, tools: loaded.value.config.tools });
  const io: TurnIO = { emit: () => {}, ask: () => Promise.reject(new Error('no')) };
  const signal = new AbortController().signal;
  const hooks = new SessionHooks({
    sessionId: 'bench',
    transcriptPath: path.join(home, 'x.jsonl'),
    root,
    config: () => loaded.value,
    run: (spec, s) => host.runCommand(spec, s),
  }).calls(io, signal)!;
  const call = { id: 'c1', name: 'read_file', args: { path: 'a.txt' } };
  const entry: ToolEntry = {
    spec: { name: 'read_file', description: '', inputSchema: {} },
    kind: 'builtin',
    readOnly: true,
    destructive: false,
  };
  const plain = async () => {
    const start = process.hrtime.bigint();
    const result = await host.run({ name: call.name, args: call.args }, signal);
    if (!result.ok) throw new Error(result.error.message);
    return ms(start);
  };
  const hooked = (post: boolean) => async () => {
    const start = process.hrtime.bigint();
    const pre = await hooks.before(call, entry);
    if (pre.allow !== 'bench allows') throw new Error(`PreToolUse said ${JSON.stringify(pre)}`);
    const result = await host.run({ name: call.name, args: call.args }, signal);
    if (!result.ok) throw new Error(result.error.message);
    if (post) {
      const after = await hooks.after(call, entry, result);
      if (!after.ok || !after.output.includes('bench saw it'))
        throw new Error(`PostToolUse left ${JSON.stringify(after)}`);
    }
    return ms(start);
  };
  const bash = async () => {
    const start = process.hrtime.bigint();
    const result = await host.run({ name: 'bash', args: { command: 'true' } }, signal);
    if (!result.ok) throw new Error(result.error.message);
    return ms(start);
  };
  try {
    const runs = { both: hooked(true), pre: hooked(false), plain, bash };
    const times = { both: [], pre: [], plain: [], bash: [] } as Record<keyof typeof runs, number[]>;
    for (let round = -3; round < ROUNDS; round++)
      for (const [name, run] of Object.entries(runs)) {
        const t = await run();
        if (round >= 0) times[name as keyof typeof times].push(t);
      }
    const baseline = median(times.plain);
    const sandbox = bwrap.ok ? 'in bubblewrap' : `unsandboxed (${bwrap.reason})`;
    const row = (name: string, values: number[], hookRuns: number): BenchResult => ({
      name,
      ours: median(values),
      baseline,
      baselineName: 'the same read_file call without hooks',
      unit: 'ms',
      ratio: median(values) / baseline,
      notes: `hooks add ${(median(values) - baseline).toFixed(1)} ms per call (${hookRuns} bash run(s) ${sandbox}); a call with no hook for its event adds nothing`,
    });
    const oneHook = median(times.pre) - baseline;
    return [
      row('tool call with a PreToolUse hook (median)', times.pre, 1),
      row('tool call with a PreToolUse and a PostToolUse hook (median)', times.both, 2),
      {
        name: 'one hook (the PreToolUse row less its call)',
        ours: oneHook,
        baseline: median(times.bash),
        baselineName: 'a bash tool call of `true` in the same sandbox',
        unit: 'ms',
        ratio: oneHook / median(times.bash),
        goal: '<= 1.5x',
        notes: 'a hook costs what a sandboxed bash run does, plus its JSON on stdin and read back',
      },
    ];
  } finally {
    await host.close();
    rmSync(base, { recursive: true, force: true });
  }
};

export default bench;

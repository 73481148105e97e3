import type { BuildOptions, Metafile } from 'esbuild';
import { isBuiltin } from 'node:module';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { reply } from '../fixtures/fake-llm/reply.ts';
import { startFakeLlm } from '../fixtures/fake-llm/server.ts';
import {
  buildOptions,
  fastBuildOptions,
  launcherBuildOptions,
} from '../../scripts/build-options.mjs';
import { CLI } from './cli.ts';
import { startTerminal } from './tui-terminal.ts';
import { metafileOf } from '../fixtures/metafile.ts';
import { timelineSteps } from './timeline.ts';
import { makeE2eWorkspace, serverBin } from './workspace.ts';

const everything = `mcpServers:
  everything:
    command: ${JSON.stringify(process.execPath)}
    args: [${JSON.stringify(serverBin('server-everything'))}, stdio]
`;

/** The status bar once the server is up, and the empty input box above it. */
const idle = (screen: string) =>
  /MCP 1\/1/.test(screen) && screen.includes('> ') && !screen.includes('esc to cancel');

describe('interactive session in a real terminal (tmux)', () => {
  it('prompt, approval, answer, /mcp, Esc during a turn, exit', async () => {
    const llm = await startFakeLlm();
    onTestFinished(() => llm.close());
    const ws = makeE2eWorkspace();
    ws.writeGlobal(
      `model: fake\nmodels:\n  fake:\n    provider: openai\n    baseUrl: ${llm.url}/v1\n    model: fake-model\n    toolProtocol: native\n    prices: { input: 1, output: 2 }\n${everything}`,
    );
    const timeline = path.join(ws.base, 'timeline');
    const term = await startTerminal({
      command: [process.execPath, CLI],
      cwd: ws.repo,
      env: { ...ws.env, NIFFLER_TIMELINE: timeline },
    });

    const first = await term.waitFor(idle);
    expect(first).toContain('/help for commands');
    expect(first).toMatch(/repo \| fake \| MCP 1\/1 \| 0 in \/ 0 out/);
    // No daemon ran: the bin started one, which is said once, above the session's frame.
    const said = first.split('starting the niffler daemon for this repository');
    expect(said).toHaveLength(2);
    expect(said[1]).toContain('/help for commands');

    // A prompt whose tool call needs approval (not read-only), approved once, then the answer.
    llm.queue(
      reply()
        .text('I will switch logging on.')
        .tool('everything__toggle-simulated-logging', {})
        .usage(100, 20),
      reply().text('Logging is **on** now.\n\n- checked\n- done', { chunks: 5 }).usage(200, 30),
    );
    await term.type('turn on logging');
    await term.press('Enter');
    const asked = await term.waitFor('Allow toggle-simulated-logging from everything?');
    expect(asked).toContain('> turn on logging');
    expect(asked).toContain('may change things');
    expect(asked).toContain('› 1. Allow once (y)');
    expect(asked).toContain('4. Deny (n)');
    await term.press('y');
    const answered = await term.waitFor((s) => s.includes('Logging is on now.') && idle(s));
    // The markdown renderer (~100 ms of this thread) loads once the session is open, not before.
    const steps = timelineSteps(timeline);
    expect(steps).toContain('session opened');
    // The daemon connection is made once the first frame is drawn, not while its code loads.
    expect(steps.indexOf('first frame drawn')).toBeGreaterThan(steps.indexOf('app code loaded'));
    expect(steps.indexOf('daemon connection begun')).toBeGreaterThan(
      steps.indexOf('first frame drawn'),
    );
    expect(steps.indexOf('markdown loaded')).toBeGreaterThan(steps.indexOf('session opened'));
    expect(answered).toMatch(
      /✓ toggle-simulated-logging \(everything\) · \d+ms\n {2}⎿ Started simulated, random-leveled logging.*…\n/,
    );
    expect(answered).toMatch(/● Logging is on now\.\n\s*\n\s+\* checked\n\s+\* done/);
    expect(answered).toContain('300 in / 50 out | $0.0004');
    expect(llm.requests[1]?.body.messages.at(-1)?.role).toBe('tool');

    // /mcp prints the live status table.
    await term.type('/mcp');
    await term.press('Enter');
    const table = await term.waitFor('MCP servers');
    expect(table).toMatch(/NAME\s+STATE\s+PROTOCOL\s+TOOLS\s+PID/);
    expect(table).toMatch(/everything\s+ready\s+2025-11-25\s+\d+\s+\d+/);

    // /context: the next request, part by part, as the model counts it; nothing is sent.
    const sent = llm.requests.length;
    await term.type('/context');
    await term.press('Enter');
    const context = await term.waitFor('kept for the answer');
    expect(context).toMatch(/The next request of session \S+: model fake, agent build/);
    expect(context).toMatch(/tool definitions \(\d+ sent whole\)\s+[\d,]+\s+[\d.]+%/);
    expect(context).toMatch(/messages of 1 turn\(s\) kept of 1/);
    expect(llm.requests).toHaveLength(sent);

    // Esc cancels a turn whose model hangs: the LLM request is aborted and the UI says so.
    llm.queue(reply().text('Working on it').hang());
    await term.type('a long task');
    await term.press('Enter');
    await term.waitFor((s) => s.includes('Working on it') && s.includes('esc to cancel'));
    await term.press('Escape');
    const cancelled = await term.waitFor((s) => s.includes('! cancelled') && idle(s));
    expect(cancelled).toContain('● Working on it');
    expect(await llm.requests[2]!.closed).toEqual({ aborted: true });

    // Ctrl-D on an empty input leaves, naming the session to resume.
    await term.press('C-d');
    const exited = await term.waitFor('[exited 0]');
    expect(exited).toMatch(/session \S+ · resume it with niffler -r \S+/);
  });
});

/** What esbuild would write for `options`, as its metafile's outputs, without writing it. */
const outputsOf = async (options: BuildOptions): Promise<Metafile['outputs']> =>
  (await metafileOf(options)).outputs;

describe('bundle', () => {
  it('loads Ink and React only on the interactive path (niffler mcp status never does)', async () => {
    const outputs = await outputsOf(
      buildOptions({ main: 'src/ui/main.ts' }, path.join('dist', '.metafile-probe')),
    );
    const byEntry = (entry: string) =>
      Object.keys(outputs).find((out) => outputs[out]!.entryPoint === entry)!;
    const staticClosure = (roots: string[]) => {
      const seen = new Set<string>();
      const visit = (out: string) => {
        if (seen.has(out)) return;
        seen.add(out);
        for (const imported of outputs[out]!.imports)
          if (imported.kind === 'import-statement' && outputs[imported.path]) visit(imported.path);
      };
      roots.forEach(visit);
      return [...seen].flatMap((out) => Object.keys(outputs[out]!.inputs));
    };
    const isUi = (input: string) =>
      /node_modules\/(ink|react|react-reconciler|marked|marked-terminal)\//.test(input);
    const commandPath = staticClosure([
      byEntry('src/ui/main.ts'),
      byEntry('src/ui/program.ts'),
      byEntry('src/ui/commands/mcp-live.ts'),
    ]);
    expect(commandPath.length).toBeGreaterThan(0);
    expect(commandPath.filter(isUi)).toEqual([]);
    const interactivePath = staticClosure([byEntry('src/ui/app/run.tsx')]);
    expect(interactivePath.some((input) => input.includes('node_modules/ink/'))).toBe(true);
  });

  it("measures Ink's text with src/ui/render/string-width.ts, the one importer of string-width itself", async () => {
    const metafile = await metafileOf(
      buildOptions({ main: 'src/ui/main.ts' }, path.join('dist', '.metafile-probe')),
    );
    const importersOf = (target: string) =>
      Object.entries(metafile.inputs)
        .filter(([, input]) => input.imports.some((i) => i.path === target))
        .map(([file]) => file)
        .sort();
    expect(importersOf('node_modules/string-width/index.js')).toEqual([
      'src/ui/render/string-width.ts',
    ]);
    const own = importersOf('src/ui/render/string-width.ts');
    expect(own).toContain('node_modules/ink/build/output.js');
    expect(own).toContain('node_modules/wrap-ansi/index.js');
  });

  it('builds the status fast path as one file with only the JSON-RPC library in it', async () => {
    const [output, ...others] = Object.values(
      await outputsOf(fastBuildOptions(path.join('dist', '.metafile-probe'))),
    );
    expect(others).toEqual([]);
    // Node's own modules only: no chunk to load after it.
    expect(output!.imports.filter((i) => !isBuiltin(i.path))).toEqual([]);
    const packages = new Set(
      Object.keys(output!.inputs).flatMap(
        (input) => /node_modules\/([^/]+)\//.exec(input)?.[1] ?? [],
      ),
    );
    expect([...packages]).toEqual(['vscode-jsonrpc']);
  });

  it('keeps the bin to routing: no package in it, only the fast paths and the main build after it', async () => {
    const [output, ...others] = Object.values(
      await outputsOf(launcherBuildOptions(path.join('dist', '.metafile-probe'))),
    );
    expect(others).toEqual([]);
    expect(Object.keys(output!.inputs).filter((input) => input.includes('node_modules/'))).toEqual(
      [],
    );
    expect(
      output!.imports
        .filter((i) => !isBuiltin(i.path))
        .map((i) => i.path)
        .sort(),
    ).toEqual(['./config.cjs', './fast.cjs', './main.js']);
  });
});

describe('the trust dialog in a real terminal (tmux)', () => {
  it('an untrusted repository with a server and AGENTS.md: the dialog shows both; y trusts it and the server starts', async () => {
    const llm = await startFakeLlm();
    onTestFinished(() => llm.close());
    const ws = makeE2eWorkspace();
    ws.writeGlobal(
      `model: fake\nmodels:\n  fake:\n    provider: openai\n    baseUrl: ${llm.url}/v1\n    model: fake-model\n`,
    );
    ws.writeRepo(everything);
    const { writeFileSync } = await import('node:fs');
    writeFileSync(path.join(ws.repo, 'AGENTS.md'), 'MARKER-AGENTS\n');
    const term = await startTerminal({
      command: [process.execPath, CLI],
      cwd: ws.repo,
      env: ws.env,
    });

    const dialog = await term.waitFor('Trust this repository?');
    expect(dialog).toContain('server everything:');
    expect(dialog).toContain('prompt files for the model: AGENTS.md');
    await term.press('y');
    await term.waitFor(
      (s) => s.includes('trusted this repository: starting everything') && idle(s),
    );

    llm.queue(reply().text('hello there'));
    await term.type('hi');
    await term.press('Enter');
    await term.waitFor('hello there');
    expect(JSON.stringify(llm.requests[0]!.body)).toContain('MARKER-AGENTS');
  });
});

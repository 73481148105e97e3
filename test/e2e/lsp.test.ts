import { cpSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { waitUntil } from '../../src/main/daemon/lifecycle.ts';
import type { LspStatusResult } from '../../src/main/protocol.ts';
import { reply } from '../fixtures/fake-llm/reply.ts';
import { startFakeLlm, type FakeLlm } from '../fixtures/fake-llm/server.ts';
import { niffler } from './cli.ts';
import { isAlive, makeE2eWorkspace } from './workspace.ts';

// Language servers in a real daemon, with the real typescript-language-server and typescript
// (dev dependencies) on a small project, the built binary and a fake model.

const TSL = path.resolve('node_modules/.bin/typescript-language-server');
const PROJECT = path.resolve('test/fixtures/lsp/ts-project');

/** A workspace holding the fixture project, the fake model, and `lsp` settings. */
const setup = async (lsp: string) => {
  const ws = makeE2eWorkspace();
  cpSync(PROJECT, ws.repo, { recursive: true });
  const llm = await startFakeLlm();
  onTestFinished(() => llm.close());
  ws.writeGlobal(
    `model: fake\nmodels:\n  fake:\n    provider: openai\n    baseUrl: ${llm.url}/v1\n    model: fake-model\nlsp:\n${lsp}`,
  );
  const run = (args: string[]) => niffler(args, { cwd: ws.repo, env: ws.env, timeoutMs: 120_000 });
  const status = async () => {
    const result = await run(['lsp', 'status', '--json']);
    expect(result.exitCode, result.stderr).toBe(0);
    return JSON.parse(result.stdout) as LspStatusResult;
  };
  const typescript = async () => (await status()).servers.find((s) => s.name === 'typescript')!;
  return { ws, llm, run, status, typescript };
};

/** The text of the tool message the model got in request `n` (0-based). */
const toolText = (llm: FakeLlm, n: number): string => {
  const messages = llm.requests[n]!.body.messages as { role: string; content: unknown }[];
  return JSON.stringify(messages.filter((m) => m.role === 'tool').at(-1)?.content ?? '');
};

/** A turn that makes one tool call and then answers. */
const callOnce = (llm: FakeLlm, tool: string, args: Record<string, unknown>) =>
  llm.queue(reply().tool(tool, args), reply().text('done'));

const ready = async (typescript: () => Promise<{ state: string }>) =>
  expect(await waitUntil(async () => (await typescript()).state === 'ready', 90_000)).toBe(true);

describe('language servers (built binary, real daemon, typescript-language-server)', () => {
  it(
    'an edit that brings a type error returns it; the fix returns none; so does a change a bash command makes; definition and references find the right places',
    { timeout: 240_000 },
    async () => {
      const { llm, run, status, typescript } = await setup(
        `  diagnosticsWait: 60\n  typescript:\n    command: ${JSON.stringify(TSL)}\n`,
      );
      // Before any session, it waits for one; a session's opening starts it.
      expect((await typescript()).state).toBe('stopped');
      llm.queue(reply().text('hello'));
      expect((await run(['-p', 'hi'])).exitCode).toBe(0);
      await ready(typescript);

      callOnce(llm, 'edit_file', {
        path: 'src/main.ts',
        oldText: '(): string => greet',
        newText: '(): number => greet',
      });
      const broke = await run(['-p', '--yes', 'make main return a number']);
      expect(broke.exitCode, broke.stderr).toBe(0);
      const broken = toolText(llm, 2);
      expect(broken).toContain(
        "src/main.ts:3:35 error TS2322: Type 'string' is not assignable to type 'number'.",
      );
      expect(broken).toMatch(/\[typescript\] 1 (new )?error in src\/main\.ts/);
      // The one-shot's stderr line for the call says so too.
      expect(broke.stderr).toMatch(/⎿ 1 new error: src\/main\.ts:3:35 error TS2322/);

      callOnce(llm, 'edit_file', {
        path: 'src/main.ts',
        oldText: '(): number => greet',
        newText: '(): string => greet',
      });
      expect((await run(['-p', '--yes', 'fix it'])).exitCode).toBe(0);
      const fixed = toolText(llm, 4);
      expect(fixed).toContain('+export const main = (): string');
      expect(fixed).not.toContain('[typescript]');
      expect(fixed).not.toContain('error TS');

      // Once the server knew the file, what an edit brings is told apart from what was there.
      callOnce(llm, 'write_file', {
        path: 'src/main.ts',
        content: readFileSync(path.join(PROJECT, 'src/main.ts'), 'utf8').replace(
          "greet('world')",
          'greet(42)',
        ),
      });
      expect((await run(['-p', '--yes', 'pass a number'])).exitCode).toBe(0);
      expect(toolText(llm, 6)).toContain('[typescript] 1 new error in src/main.ts:');
      expect(toolText(llm, 6)).toContain('src/main.ts:3:41 error TS2345');

      callOnce(llm, 'lsp', { operation: 'definition', file: 'src/main.ts', line: 5, column: 65 });
      expect((await run(['-p', 'where is address?'])).exitCode).toBe(0);
      expect(toolText(llm, 8)).toContain('src/greet.ts:8:3  address(name: string): string {');

      callOnce(llm, 'lsp', { operation: 'references', symbol: 'greet' });
      expect((await run(['-p', 'who uses greet?'])).exitCode).toBe(0);
      const refs = toolText(llm, 10);
      expect(refs).toContain('3 references in 2 files:');
      expect(refs).toContain('src/greet.ts:2:14  export const greet');
      expect(refs).toContain('src/main.ts:1:10  import { greet, Greeter }');
      expect(refs).toContain('src/main.ts:3:35');

      // A command's changes are found through the turn's undo snapshots.
      callOnce(llm, 'bash', { command: "sed -i 's/greet(42)/greet(true)/' src/main.ts" });
      const sed = await run(['-p', '--yes', 'pass a boolean']);
      expect(sed.exitCode, sed.stderr).toBe(0);
      expect(toolText(llm, 12)).toContain('[typescript] 1 new error in src/main.ts:');
      expect(toolText(llm, 12)).toContain(
        "src/main.ts:3:41 error TS2345: Argument of type 'boolean'",
      );

      const live = (await status()).servers.find((s) => s.name === 'typescript')!;
      expect(live).toMatchObject({ state: 'ready', source: 'yours', diagnostics: 'tsserver' });
      expect(live.pid).toBeGreaterThan(0);
      expect(live.files).toBeGreaterThanOrEqual(1);
      expect(live.lastDiagnosticsAt).not.toBeNull();
      const table = (await run(['lsp', 'status'])).stdout;
      expect(table).toMatch(/^typescript\s+ready\s+\d+\s+\d+\s+\S+ ago/m);
    },
  );

  it(
    'a server killed with -9 is restarted, and the next edit has its diagnostics again',
    { timeout: 240_000 },
    async () => {
      const { llm, run, typescript } = await setup(
        `  diagnosticsWait: 60\n  typescript:\n    command: ${JSON.stringify(TSL)}\n`,
      );
      llm.queue(reply().text('hello'));
      await run(['-p', 'hi']);
      await ready(typescript);
      const { pid } = await typescript();
      process.kill(pid!, 'SIGKILL');
      expect(
        await waitUntil(async () => {
          const now = await typescript();
          return now.state === 'ready' && now.pid !== pid && now.restarts >= 1;
        }, 90_000),
      ).toBe(true);
      expect((await typescript()).lastError?.message).toMatch(/exited on SIGKILL/);
      callOnce(llm, 'edit_file', {
        path: 'src/main.ts',
        oldText: "greet('world')",
        newText: 'greet(1)',
      });
      expect((await run(['-p', '--yes', 'break it'])).exitCode).toBe(0);
      expect(toolText(llm, 2)).toContain('src/main.ts:3:41 error TS2345');
    },
  );

  it(
    'a hung server (SIGSTOP) is reported, and the edit comes back without waiting past the deadline',
    { timeout: 240_000 },
    async () => {
      const { llm, run, typescript } = await setup(
        `  diagnosticsWait: 2\n  typescript:\n    command: ${JSON.stringify(TSL)}\n`,
      );
      llm.queue(reply().text('hello'));
      await run(['-p', 'hi']);
      await ready(typescript);
      const { pid } = await typescript();
      process.kill(pid!, 'SIGSTOP');
      onTestFinished(() => (isAlive(pid!) ? void process.kill(pid!, 'SIGCONT') : undefined));
      callOnce(llm, 'edit_file', {
        path: 'src/main.ts',
        oldText: "greet('world')",
        newText: 'greet(1)',
      });
      const edited = await run(['-p', '--yes', 'break it']);
      expect(edited.exitCode, edited.stderr).toBe(0);
      const text = toolText(llm, 2);
      expect(text).toContain('+export const main = (): string => greet(1);');
      expect(text).not.toContain('[typescript]');
      const hung = await typescript();
      expect(hung.state).toBe('degraded');
      expect(hung.lastError?.message).toMatch(
        /said nothing for \d+\.\d s after a change to src\/main\.ts \(stopped or stuck\?\)/,
      );
      expect((await run(['lsp', 'status'])).stdout).toContain('typescript: said nothing for');
    },
  );
});

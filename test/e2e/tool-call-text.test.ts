import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reply } from '../fixtures/fake-llm/reply.ts';
import { startFakeLlm, type FakeLlm } from '../fixtures/fake-llm/server.ts';
import { testEnv } from '../fixtures/env.ts';
import { corpus, corpusSchemas, type CorpusCase } from '../fixtures/tool-call-text/corpus.ts';
import { niffler } from './cli.ts';
import { makeE2eWorkspace } from './workspace.ts';

// Every case of the corpus (test/fixtures/tool-call-text), streamed as the model's `content` by
// the fake OpenAI-compatible and Ollama servers in random chunk sizes, through the built binary:
// the tool runs (a repository tool that prints its arguments, or niffler's read_file), the raw
// call syntax reaches neither the terminal, nor --json, nor the transcript, and the answer follows.

const FINAL = 'Done: the tool answered.';
const CASES = corpus();
/** What a case's answer may not show: call syntax, unless the case's own answer holds it. */
const MARKERS = [
  '<tool_call',
  'TOOL_CALL:',
  '[TOOL_CALLS]',
  '<|',
  '<｜',
  'functools[',
  '"arguments"',
  '"parameters"',
  '>>>',
  '```tool_code',
  '<function=',
  '<invoke',
  '[ARGS]',
];

/** A seed per case, so a failure replays with the same cuts. */
const seedOf = (id: string): number =>
  [...id].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7);

/** A trusted repository whose `.niffler/tools` has every tool the corpus calls (each prints its arguments). */
const workspace = (provider: 'openai' | 'ollama', llm: FakeLlm) => {
  const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'nf29-')));
  const home = path.join(base, 'h');
  const repo = path.join(base, 'repo');
  for (const dir of [home, path.join(repo, '.git'), path.join(repo, '.niffler', 'tools')])
    mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(repo, 'README.md'), 'The readme of the test repository.\n');
  const url = provider === 'openai' ? `${llm.url}/v1` : llm.url;
  writeFileSync(
    path.join(home, 'config.yaml'),
    `model: local\nmodels:\n  local:\n    provider: ${provider}\n    baseUrl: ${url}\n    model: fake-model\n`,
  );
  for (const [name, schema] of Object.entries(corpusSchemas()))
    writeFileSync(
      path.join(repo, '.niffler', 'tools', `${name}.yaml`),
      `description: The ${name} tool of the corpus; prints its arguments\nparameters: ${JSON.stringify(schema)}\nannotations: { readOnlyHint: true }\ncommand: cat\n`,
    );
  const env = testEnv({ HOME: base, NIFFLER_HOME: home, NO_COLOR: '1' });
  const run = (args: string[]) => niffler(args, { cwd: repo, env, timeoutMs: 60_000 });
  /** The transcript files of the workspace's sessions, by path. */
  const transcripts = (): Map<string, string> => {
    const dir = path.join(home, 'sessions');
    if (!existsSync(dir)) return new Map();
    const files = readdirSync(dir, { recursive: true, withFileTypes: true }).filter((f) =>
      f.name.endsWith('.jsonl'),
    );
    return new Map(
      files.map((f) => {
        const file = path.join(f.parentPath, f.name);
        return [file, readFileSync(file, 'utf8')];
      }),
    );
  };
  return {
    run,
    transcripts,
    trust: () => run(['trust']),
    remove: async () => {
      await run(['daemon', 'stop']);
      rmSync(base, { recursive: true, force: true });
    },
  };
};

/**
 * What stdout shows for a case (its last line break taken off, as execa does): its answer, a line
 * break where tool lines interrupt it, then the answer after the tool ran.
 */
const expectedStdout = (c: CorpusCase): string => {
  if (c.calls.length === 0) return c.answer.replace(/\n$/, '');
  const before = c.answer && !c.answer.endsWith('\n') ? `${c.answer}\n` : c.answer;
  return `${before}${FINAL}`;
};

const noSyntax = (shown: string, c: CorpusCase, where: string) => {
  for (const marker of MARKERS)
    if (!c.answer.includes(marker) && !c.reasoning.includes(marker))
      expect(shown.includes(marker), `${c.id}: ${where} shows ${marker}`).toBe(false);
};

describe.each(['openai', 'ollama'] as const)(
  '%s-compatible server, text streamed as content',
  (provider) => {
    let llm: FakeLlm;
    let ws: ReturnType<typeof workspace>;
    beforeAll(async () => {
      llm = await startFakeLlm({ strict: true });
      ws = workspace(provider, llm);
      expect((await ws.trust()).exitCode).toBe(0);
    }, 60_000);
    afterAll(async () => {
      await ws.remove();
      await llm.close();
    }, 60_000);

    it.each(CASES.map((c) => [c.id, c] as const))('%s', async (_id, c) => {
      llm.queue(reply().text(c.text, { chunks: { random: seedOf(c.id), max: 9 } }));
      if (c.calls.length > 0) llm.queue(reply().text(FINAL));
      const seen = llm.requests.length;
      const before = new Set(ws.transcripts().keys());
      // The Ollama run reads the --json lines, the OpenAI one the terminal's text.
      const json = provider === 'ollama';
      const result = await ws.run(['-p', `run ${c.id}`, ...(json ? ['--json'] : [])]);
      expect(result.exitCode, result.stderr).toBe(0);
      expect(llm.pending, `${c.id}: replies left unasked`).toBe(0);
      const requests = llm.requests.slice(seen);
      expect(requests).toHaveLength(c.calls.length > 0 ? 2 : 1);
      if (json) {
        const lines = result.stdout
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as Record<string, unknown>);
        const done = lines.at(-1)!;
        expect(done).toMatchObject({ type: 'done', outcome: 'answered' });
        const calls = lines.filter((l) => l['type'] === 'tool-call');
        expect(calls.map((l) => ({ name: l['name'], args: l['args'] }))).toEqual(c.calls);
        const text = lines
          .flatMap((l) => (l['type'] === 'text' ? [l['text'] as string] : []))
          .join('');
        expect(text).toBe(c.calls.length > 0 ? c.answer + FINAL : c.answer);
        noSyntax(
          JSON.stringify(
            lines.filter((l) => l['type'] !== 'reasoning' && l['type'] !== 'turn-start'),
          ),
          c,
          '--json',
        );
      } else {
        expect(result.stdout).toBe(expectedStdout(c));
        for (const call of c.calls) {
          expect(result.stderr).toContain(`→ ${call.name} `);
          expect(result.stderr).toContain(`✓ ${call.name} `);
        }
        noSyntax(result.stdout, c, 'stdout');
      }
      if (c.calls.length > 0) {
        // The model reads each tool's result, in its server's own wire shape.
        const back = JSON.stringify(requests[1]!.body.messages);
        for (const call of c.calls)
          if (call.name !== 'read_file')
            expect(back).toContain(JSON.stringify(JSON.stringify(call.args)).slice(1, -1));
      }
      // This run's session: its assistant messages hold the answer and the calls, never syntax.
      const written = [...ws.transcripts()].filter(([file]) => !before.has(file));
      expect(written).toHaveLength(1);
      const assistant = written[0]![1].split('\n').filter((l) => l.includes('"assistant"'));
      expect(assistant.length).toBeGreaterThan(0);
      noSyntax(assistant.join('\n'), c, 'the transcript');
    });
  },
);

describe('what a recovered call becomes', () => {
  it('is a normal tool call in the transcript: --continue sends it back natively', async () => {
    const llm = await startFakeLlm({ strict: true });
    const ws = workspace('openai', llm);
    try {
      llm.queue(
        reply().text(
          'Let me read it.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "README.md"}}\n</tool_call>',
          { chunks: { random: 3 } },
        ),
        reply().text('It is short.'),
        reply().text('Yes.'),
      );
      expect((await ws.run(['-p', 'read the readme'])).stdout).toBe(
        'Let me read it.\nIt is short.',
      );
      const again = await ws.run(['-p', '--continue', 'is it?']);
      expect(again.stdout).toBe('Yes.');
      const messages = llm.requests[2]!.body.messages as {
        role: string;
        content: unknown;
        tool_calls?: { function: { name: string; arguments: string } }[];
      }[];
      const assistant = messages.find((m) => m.role === 'assistant' && m.tool_calls);
      expect(assistant).toMatchObject({
        content: 'Let me read it.\n',
        tool_calls: [{ function: { name: 'read_file', arguments: '{"path":"README.md"}' } }],
      });
      expect(JSON.stringify(messages)).not.toContain('<tool_call>');
      expect(messages.find((m) => m.role === 'tool')?.content).toContain(
        'The readme of the test repository.',
      );
    } finally {
      await ws.remove();
      await llm.close();
    }
  });

  it('1 MB of arguments stays text: printed as it came, nothing runs, the turn ends', async () => {
    const llm = await startFakeLlm({ strict: true });
    const ws = workspace('ollama', llm);
    try {
      const text = `<tool_call>\n{"name": "read_file", "arguments": {"path": "${'x'.repeat(1_048_576)}"}}\n</tool_call>`;
      llm.queue(reply().text(text, { chunks: { random: 11, max: 8192 } }));
      const result = await ws.run(['-p', 'write it']);
      expect(result.exitCode).toBe(0);
      expect(result.stdout).toBe(text);
      expect(result.stderr).not.toContain('→');
      expect(llm.requests).toHaveLength(1);
    } finally {
      await ws.remove();
      await llm.close();
    }
  });
});

describe('auto, for an Ollama model, from /api/show', () => {
  it('chooses the text protocol for a model without tools and native for one with them, and says so', async () => {
    const shown = JSON.parse(
      readFileSync(
        new URL('../fixtures/fake-llm/ollama-show/models.json', import.meta.url),
        'utf8',
      ),
    ) as Record<string, unknown>;
    const llm = await startFakeLlm({ ollamaModels: shown });
    const ws = makeE2eWorkspace();
    try {
      ws.writeGlobal(
        `model: gem\nmodels:\n  gem:\n    provider: ollama\n    baseUrl: ${llm.url}\n    model: gemma3:4b\n  coder:\n    provider: ollama\n    baseUrl: ${llm.url}\n    model: qwen2.5-coder:7b\n`,
      );
      const listed = await ws.runJson<
        { name: string; tools: string; family?: string; reason: string }[]
      >(['models']);
      expect(listed.find((m) => m.name === 'gem')).toMatchObject({
        tools: 'text',
        reason: expect.stringContaining(
          'no "tools" among gemma3:4b\'s capabilities (completion, vision)',
        ),
      });
      expect(listed.find((m) => m.name === 'coder')).toMatchObject({
        tools: 'native',
        family: 'hermes',
      });
      const table = (await ws.run(['models'])).stdout;
      expect(table).toMatch(/gem \*\s+ollama\s+gemma3:4b\s+text/);
      expect(table).toMatch(/coder\s+ollama\s+qwen2\.5-coder:7b\s+native\s+auto \(hermes first\)/);

      llm.queue(
        reply().text('TOOL_CALL: {"name": "read_file", "args": {"path": "nothing.md"}}'),
        reply().text('No such file.'),
      );
      const gem = await ws.run(['-p', 'read nothing.md']);
      expect(gem.stderr).toContain('no "tools" among gemma3:4b');
      expect(gem.stderr).toContain('→ read_file {"path":"nothing.md"}');
      expect(gem.stdout).toBe('No such file.');
      expect(llm.requests[0]!.body.tools).toBeUndefined();

      llm.queue(reply().text('Hello.'));
      await ws.run(['-p', '--model', 'coder', 'hi']);
      expect(llm.requests[2]!.body.tools?.length).toBeGreaterThan(0);
    } finally {
      await llm.close();
    }
  });
});

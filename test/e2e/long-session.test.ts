import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { readTranscript } from '../../src/main/engine/transcript.ts';
import { nifflerPaths } from '../../src/main/paths.ts';
import { pairingProblem } from '../fixtures/fake-llm/pairing.ts';
import { reply } from '../fixtures/fake-llm/reply.ts';
import { startFakeLlm, type RecordedRequest } from '../fixtures/fake-llm/server.ts';
import { countText } from '../fixtures/fake-llm/tokens.ts';
import { makeE2eWorkspace } from './workspace.ts';

// The issue's daily use, as a new user with a local model would have it: a `--continue` session
// of -p turns, each a prompt of ~1.5k tokens, a file read of ~1.5k tokens and an answer of ~400
// words, against a fake model that refuses any request over its window (prompt and max_tokens
// together, as vLLM does, counted by its own tokenizer). The built binary and a real daemon.

const isSummary = (request: RecordedRequest): boolean =>
  JSON.stringify(request.body.messages?.[0] ?? '').includes('You summarize a working session');

const VOCABULARY =
  'the parser reads each module and returns a value because tests expect stable output while ' +
  'callers pass options through config files so errors name their line and column numbers';

/** About `tokens` tokens of prose, as the fake counts them, different for each `seed`. */
const prose = (tokens: number, seed: number): string => {
  const words = VOCABULARY.split(' ');
  const out: string[] = [];
  for (let i = 0; countText(out.join(' ')) < tokens; i++)
    out.push(`${words[(i * 7 + seed) % words.length]}${i % 17 === 0 ? ` ${seed}.${i}` : ''}`);
  return out.join(' ');
};

const writeFile = (root: string, name: string, text: string) => {
  mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
  writeFileSync(path.join(root, name), text);
};

/** A workspace whose model is a fake with a `window`-token window, served summaries on request. */
const setup = async (window: number, maxTokens?: number) => {
  const ws = makeE2eWorkspace();
  const llm = await startFakeLlm({
    contextWindow: window,
    countAnswer: true,
    route: (request) =>
      isSummary(request)
        ? reply().text(`Goals: answer questions about the files. State: ${prose(150, 99)}`)
        : undefined,
  });
  onTestFinished(() => llm.close());
  ws.writeGlobal(
    `model: local\nmodels:\n  local:\n    provider: openai\n    baseUrl: ${llm.url}/v1\n    model: local-model\n` +
      `    toolProtocol: native\n    contextWindow: ${window}\n${maxTokens ? `    maxTokens: ${maxTokens}\n` : ''}` +
      'mcpServers: {}\n',
  );
  return { ws, llm };
};

/** One turn of the issue's shape: the model reads file `n`, then answers ~400 words. */
const turn = async (
  ws: ReturnType<typeof makeE2eWorkspace>,
  llm: Awaited<ReturnType<typeof setup>>['llm'],
  n: number,
) => {
  const answer = `Answer ${n}: ${prose(520, n + 50)}`;
  llm.queue(reply().tool('read_file', { path: `src/module-${n}.txt` }), reply().text(answer));
  const prompt = `Question ${n}: ${prose(1500, n)}`;
  const result = await ws.run(['-p', '--continue', prompt]);
  return { prompt, answer, result };
};

/** Every request fitted the window with its max_tokens, had its tool calls paired, and none was refused. */
const expectAllFit = (llm: Awaited<ReturnType<typeof setup>>['llm'], window: number) => {
  for (const request of llm.requests) {
    expect(request.tokens! + (request.maxTokens ?? 0)).toBeLessThanOrEqual(window);
    expect(pairingProblem('openai', request.body)).toBeUndefined();
  }
};

describe('a session never dies at the window (built binary, real daemon, a fake model enforcing its window)', () => {
  it('16k: 20 --continue turns of a 1.5k-token prompt, a 1.5k-token read and a 400-word answer — every turn answered, no request over the window', async () => {
    const WINDOW = 16_000;
    const { ws, llm } = await setup(WINDOW, 8192);
    for (let n = 0; n < 20; n++)
      writeFile(ws.repo, `src/module-${n}.txt`, `module ${n}\n${prose(1500, n + 200)}\n`);
    const prompts: string[] = [];
    for (let n = 0; n < 20; n++) {
      const { prompt, answer, result } = await turn(ws, llm, n);
      prompts.push(prompt);
      expect(result.exitCode, `turn ${n}: ${result.stderr}`).toBe(0);
      expect(result.stdout).toBe(answer);
    }
    expectAllFit(llm, WINDOW);
    expect(llm.requests.some(isSummary)).toBe(true);
    // The transcript holds every prompt, whole.
    const dir = nifflerPaths(ws.repo, ws.env).sessionsDir;
    const report = JSON.parse(
      (await ws.run(['sessions', 'show', '--context', '--json'])).stdout,
    ) as {
      context: { sessionId: string; total: number; limit: number; compactions: unknown[] };
    };
    const transcript = readTranscript(dir, report.context.sessionId);
    expect(transcript.messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(
      prompts,
    );
    expect(report.context.compactions.length).toBeGreaterThan(0);
    expect(report.context.total).toBeLessThanOrEqual(report.context.limit);
  }, 600_000);

  it('8k: the same, and one oversized pasted prompt gets the clear error while the session goes on', async () => {
    const WINDOW = 8000;
    const { ws, llm } = await setup(WINDOW);
    for (let n = 0; n < 20; n++)
      writeFile(ws.repo, `src/module-${n}.txt`, `module ${n}\n${prose(1500, n + 200)}\n`);
    const prompts: string[] = [];
    for (let n = 0; n < 20; n++) {
      if (n === 8) {
        // A whole log pasted on stdin: ~12k tokens, more than the window itself.
        const pasted = `Why does this fail?\n${prose(12_000, 7)}`;
        const sent = llm.requests.length;
        const result = await ws.run(['-p', '--continue'], pasted);
        prompts.push(pasted);
        expect(result.exitCode).toBe(1);
        expect(result.stderr).toMatch(
          /your message is too large for the model's context window: about [\d,]+ tokens, .* of the 8,000-token window of local — about [\d,]+ too many/,
        );
        expect(result.stderr).toMatch(
          /cut the pasted text \(by about [\d,]+ characters\) or send it in parts/,
        );
        expect(result.stderr).toContain('models.local.contextWindow');
        // Nothing was sent for it.
        expect(llm.requests).toHaveLength(sent);
        continue;
      }
      const { prompt, answer, result } = await turn(ws, llm, n);
      prompts.push(prompt);
      expect(result.exitCode, `turn ${n}: ${result.stderr}`).toBe(0);
      expect(result.stdout).toBe(answer);
    }
    expectAllFit(llm, WINDOW);
    const dir = nifflerPaths(ws.repo, ws.env).sessionsDir;
    const id = JSON.parse((await ws.run(['sessions', '--json'])).stdout)[0].id as string;
    const transcript = readTranscript(dir, id);
    expect(transcript.messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(
      prompts,
    );
  }, 600_000);
});

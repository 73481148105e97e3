import { execa } from 'execa';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { reply } from '../fixtures/fake-llm/reply.ts';
import { startFakeLlm } from '../fixtures/fake-llm/server.ts';
import { CLI } from './cli.ts';
import { makeE2eWorkspace, serverBin } from './workspace.ts';

const setup = async () => {
  const ws = makeE2eWorkspace();
  const llm = await startFakeLlm();
  onTestFinished(() => llm.close());
  ws.writeGlobal(
    `model: fake\nmodels:\n  fake:\n    provider: openai\n    baseUrl: ${llm.url}/v1\n    model: fake-model\n` +
      `mcpServers:\n  everything:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(serverBin('server-everything'))}, stdio]\n`,
  );
  return { ws, llm };
};

describe('niffler -p (built binary, fake LLM, real MCP server)', () => {
  it('streams the final answer to stdout and tool activity to stderr', async () => {
    const { ws, llm } = await setup();
    llm.queue(
      reply().tool('everything__echo', { message: 'ping' }),
      reply().text('The server said: ping.'),
    );
    const result = await ws.run(['-p', 'ask the echo server']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe('The server said: ping.');
    expect(result.stderr).toContain('→ everything__echo {"message":"ping"}');
    expect(result.stderr).toMatch(/✓ everything__echo \d+ms: Echo: ping/);
  });

  it('@file and @server:uri in the prompt attach as in the interactive session; what cannot be is said', async () => {
    const { ws, llm } = await setup();
    const { writeFileSync } = await import('node:fs');
    writeFileSync(`${ws.repo}/notes.txt`, 'the answer is 42\n');
    writeFileSync(`${ws.repo}/../outside.txt`, 'not yours\n');
    llm.queue(reply().text('read them'));
    const uri = 'demo://resource/static/document/architecture.md';
    const result = await ws.run([
      '-p',
      `compare @notes.txt with @everything:${uri} and @../outside.txt`,
    ]);
    expect(result).toMatchObject({ exitCode: 0, stdout: 'read them' });
    expect(result.stderr).toContain(`attached notes.txt, @everything:${uri}`);
    expect(result.stderr).toContain('@../outside.txt is outside the workspace; not attached');
    const user = String(
      (llm.requests[0]!.body.messages as { role: string; content: string }[]).find(
        (m) => m.role === 'user',
      )!.content,
    );
    expect(user).toContain('<file path="notes.txt">\nthe answer is 42\n');
    expect(user).toContain(`<resource server="everything" uri="${uri}">`);
  });

  it('--json prints one event per line and a done line with usage', async () => {
    const { ws, llm } = await setup();
    llm.queue(reply().text('hello').usage(3, 1));
    const result = await ws.run(['-p', 'hi', '--json']);
    const lines = result.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string });
    expect(lines[0]).toMatchObject({ type: 'turn-start' });
    expect(lines.at(-1)).toMatchObject({
      type: 'done',
      outcome: 'answered',
      text: 'hello',
      usage: { inputTokens: 3, outputTokens: 1 },
    });
  });

  it('denies writes without --yes and says which', async () => {
    const { ws, llm } = await setup();
    llm.queue(reply().tool('write_file', { path: 'x.txt', content: 'x' }), reply().text('ok'));
    const result = await ws.run(['-p', 'write x']);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toContain(
      'denied: write_file (run with --yes, or allow them in tools.policy)',
    );
  });

  it('takes the prompt from stdin; exits 2 without a prompt; 1 when no model answers', async () => {
    const { ws, llm } = await setup();
    llm.queue(reply().text('from stdin'));
    expect((await ws.run(['-p'], 'piped question')).stdout).toBe('from stdin');
    expect((await ws.run(['-p', ''], '')).exitCode).toBe(2);
    ws.writeGlobal(
      'model: gone\nmodels:\n  gone:\n    provider: openai\n    baseUrl: http://127.0.0.1:9/v1\n    model: x\n',
    );
    const unreachable = await ws.run(['--no-daemon', '-p', 'hello']);
    expect(unreachable.exitCode).toBe(1);
    expect(unreachable.stderr).toContain('http://127.0.0.1:9/v1');
    // Said once: the error comes with the turn's end, not also as a notice before it.
    expect(unreachable.stderr.split('http://127.0.0.1:9/v1').length - 1).toBe(1);
  });

  it('kill -9 of the daemon during a turn loses nothing: --continue sends every message written before', async () => {
    const { ws, llm } = await setup();
    const notes = 'remember: the answer is 42\n';
    const { writeFileSync } = await import('node:fs');
    writeFileSync(`${ws.repo}/notes.txt`, notes);
    llm.queue(reply().tool('read_file', { path: 'notes.txt' }), reply().text('partial…').hang());
    const first = execa(process.execPath, [CLI, '-p', 'read the notes'], {
      cwd: ws.repo,
      env: ws.env,
      extendEnv: false,
      reject: false,
      stdin: 'ignore',
    });
    await llm.waitForRequests(2);
    const { pid } = await ws.runJson<{ pid: number }>(['daemon', 'status']);
    process.kill(pid, 'SIGKILL');
    expect((await first).exitCode).toBe(1);

    llm.queue(reply().text('It is 42.'));
    const again = await ws.run(['-p', '--continue', 'so what is it?']);
    expect(again.stderr).toBe('');
    expect(again.stdout).toBe('It is 42.');
    const messages = llm.requests[2]!.body.messages as { role: string; content: unknown }[];
    expect(messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'user']);
    expect(JSON.stringify(messages[3])).toContain('the answer is 42');
    const sessions = await ws.runJson<{ messages: number }[]>(['sessions']);
    expect(sessions[0]!.messages).toBe(5);
  });
  it('a daemon keeps no finished one-shot session in memory, and --continue still reads it back whole', async () => {
    const { ws, llm } = await setup();
    for (const n of [1, 2, 3]) {
      llm.queue(
        reply().tool('everything__echo', { message: `run ${n}` }),
        reply().text(`done ${n}`),
      );
      expect((await ws.run(['-p', `echo run ${n}`])).stdout).toBe(`done ${n}`);
    }
    // The front-end has gone: its sessions go from memory once their SessionEnd hooks have run.
    await vi.waitFor(
      async () =>
        expect(
          (await ws.runJson<{ sessionsInMemory: number }>(['daemon', 'status'])).sessionsInMemory,
        ).toBe(0),
      { timeout: 10_000, interval: 50 },
    );
    llm.queue(reply().text('three runs'));
    const again = await ws.run(['-p', '--continue', 'how many runs?']);
    expect(again.stdout).toBe('three runs');
    const messages = llm.requests.at(-1)!.body.messages as { role: string; content: unknown }[];
    expect(messages.map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'assistant',
      'user',
    ]);
    expect(JSON.stringify(messages[3])).toContain('run 3');
  });
});

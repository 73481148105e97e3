import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { CLI } from './cli.ts';
import { makeE2eWorkspace } from './workspace.ts';

// A config command writes its answer by hand (render/output.ts): to a terminal, a file, and a pipe
// alike. Through a pipe its reader drains at its own pace, and may close it before reading.

/** A global config with `count` servers: `mcp list --json` then prints ~150 bytes each. */
const manyServers = (count: number) =>
  `mcpServers:\n${Array.from({ length: count }, (_, i) => `  server-${i}: { command: node, args: [server-${i}.js, --port, '${i}'] }\n`).join('')}`;

const run = (args: string[], cwd: string, env: Record<string, string>) =>
  spawn(process.execPath, [CLI, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });

describe('a config command writing to a pipe', () => {
  it('gives a reader that drains it late the whole answer, several pipe buffers long', async () => {
    const ws = makeE2eWorkspace();
    ws.writeGlobal(manyServers(2000));
    const child = run(['mcp', 'list', '--json'], ws.repo, ws.env);
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // Paused: the command's one write of ~300 KB fills the pipe (64 KiB) and waits for this
    // side, which reads from its first chunk on.
    child.stdout.pause();
    await once(child.stdout, 'readable');
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stdout.resume();
    const [code] = (await once(child, 'close')) as [number];
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const text = Buffer.concat(chunks).toString('utf8');
    expect(text.length).toBeGreaterThan(4 * 65536);
    const listed = JSON.parse(text) as { name: string }[];
    expect(listed).toHaveLength(2000);
    expect(listed.map((s) => s.name)).toContain('server-1999');
  });

  it('ends quietly, exit 0, when its reader has closed the pipe (`| head`)', async () => {
    const ws = makeE2eWorkspace();
    ws.writeGlobal(manyServers(50));
    const child = run(['mcp', 'list'], ws.repo, ws.env);
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.destroy();
    const [code] = (await once(child, 'close')) as [number];
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });
});

import { Worker } from 'node:worker_threads';
import { describe, expect, it, onTestFinished } from 'vitest';
import { McpHost } from '../../../src/main/threads/mcp.ts';
import type { McpServerStatus, McpWorkerData } from '../../../src/workers/protocol/mcp.ts';
import { fixtureSpec } from '../../fixtures/mcp/servers.ts';

// A cold MCP worker spawns its servers, then loads its client code (the SDK): a few hundred ms in
// which its thread runs nothing else. It says `ready` first with every server's state, so that
// `mcp status` — the command a user runs first, and the one that finds a daemon killed -9 — is
// answered by main meanwhile, not after the load (the bench row: kill -9 to a served mcp status).
// The worker here is a real thread doing what the MCP worker's entry does in that order: it says
// ready with the statuses, then holds its thread (Atomics.wait, as a synchronous module load
// does) until the test lets it go; then it says `serving` and answers requests itself.

const STAND_IN = `
const { parentPort, workerData } = require('node:worker_threads');
const held = new Int32Array(workerData.held);
parentPort.once('message', (init) => {
  const statuses = init.data.servers.map((spec) => ({ name: spec.name, state: 'starting', pid: null, from: 'early' }));
  parentPort.postMessage({ type: 'ready', statuses });
  setImmediate(() => {
    Atomics.wait(held, 0, 0);
    parentPort.postMessage({ type: 'serving' });
    parentPort.on('message', (request) => {
      if (request.type === 'status')
        parentPort.postMessage({ type: 'result', id: request.id, value: statuses.map((s) => ({ ...s, state: 'ready', from: 'manager' })) });
      if (request.type === 'shutdown') {
        parentPort.postMessage({ type: 'result', id: request.id, value: {} });
        process.exit(0);
      }
    });
  });
});
`;

const data = (): McpWorkerData => ({
  servers: [fixtureSpec('echo', { name: 'one' }), fixtureSpec('echo', { name: 'two' })],
  root: '/nonexistent',
  roots: [],
  logsDir: '/nonexistent/logs',
  outputsDir: '/nonexistent/outputs',
  logLevel: 'error',
  health: { initialDelayMs: 50, maxDelayMs: 400, killGraceMs: 1_000 },
});

describe('mcp status while the MCP worker loads its client code', () => {
  it('is answered from the states the worker gave with ready, then by the worker once it serves', async () => {
    const held = new SharedArrayBuffer(4);
    const worker = new Worker(STAND_IN, { eval: true, workerData: { held } });
    const release = () => {
      Atomics.store(new Int32Array(held), 0, 1);
      Atomics.notify(new Int32Array(held), 0);
    };
    onTestFinished(async () => {
      release();
      await worker.terminate();
    });
    const host = await McpHost.start(data(), {}, { worker, exited: false });
    const serving = new Promise<void>((resolve) =>
      worker.on('message', (m: { type: string }) => m.type === 'serving' && resolve()),
    );

    // The worker's thread is held: only main can answer.
    const early = (await host.status()) as (McpServerStatus & { from: string })[];
    expect(early.map((s) => [s.name, s.state, s.from])).toEqual([
      ['one', 'starting', 'early'],
      ['two', 'starting', 'early'],
    ]);

    release();
    await serving;
    const later = (await host.status()) as (McpServerStatus & { from: string })[];
    expect(later.map((s) => [s.name, s.state, s.from])).toEqual([
      ['one', 'ready', 'manager'],
      ['two', 'ready', 'manager'],
    ]);
    await host.close();
  });
});

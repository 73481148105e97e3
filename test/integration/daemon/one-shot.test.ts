import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { EventEmitter, once } from 'node:events';
import {
  createMessageConnection,
  SocketMessageReader,
  SocketMessageWriter,
} from 'vscode-jsonrpc/node';
import { describe, expect, it, onTestFinished } from 'vitest';
import { connectSocket } from '../../../src/main/daemon/client.ts';
import { serveConnection } from '../../../src/main/daemon/connection.ts';
import type { EngineHandlers } from '../../../src/main/protocol.ts';
import { frame } from '../../../src/main/daemon/frames.ts';
import { askOnce, requestDaemon } from '../../../src/main/daemon/one-shot.ts';
import { runDaemon } from '../../../src/main/daemon/server.ts';
import { NifflerError } from '../../../src/main/errors.ts';
import { nifflerPaths } from '../../../src/main/paths.ts';
import { VERSION } from '../../../src/main/version.ts';
import { serverBin } from '../../e2e/workspace.ts';
import { testEnv } from '../../fixtures/env.ts';

const tempDir = () => {
  const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'nf-o-')));
  onTestFinished(() => rmSync(base, { recursive: true, force: true }));
  return base;
};

/**
 * A socket served by the engine protocol's own server side (serveConnection on vscode-jsonrpc),
 * with an engine whose answers the test chooses.
 */
const written = new EventEmitter();

/** Resolves once the daemon side has written a reply with this id. */
const replied = (id: number) =>
  new Promise<void>((resolve) => {
    const check = (text: string) => {
      if (!new RegExp(`"id":${id}[,}]`).test(text)) return;
      written.off('data', check);
      resolve();
    };
    written.on('data', check);
  });

interface StubDaemon {
  /** Closes every connection (the daemon dies). */
  hangUp: () => void;
  /** Stops accepting connections and removes the socket (the daemon exited). */
  stopListening: () => void;
}

const stubDaemon = async (
  handle: (daemon: StubDaemon) => EngineHandlers['handle'],
  socketPath = path.join(tempDir(), 's.sock'),
) => {
  const sockets = new Set<net.Socket>();
  const daemon: StubDaemon = {
    hangUp: () => sockets.forEach((socket) => socket.destroy()),
    stopListening: () => server.close(),
  };
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    // What the daemon wrote, so a test can hang up right after a given reply has gone out.
    const write = socket.write.bind(socket);
    socket.write = (chunk: string | Uint8Array, ...rest: never[]) => {
      written.emit('data', String(chunk));
      return write(chunk, ...rest);
    };
    serveConnection(
      createMessageConnection(new SocketMessageReader(socket), new SocketMessageWriter(socket)),
      { handle: handle(daemon), attach: () => () => {} },
    );
  });
  server.listen(socketPath);
  await once(server, 'listening');
  onTestFinished(async () => {
    daemon.hangUp();
    if (!server.listening) return;
    server.close();
    await once(server, 'close');
  });
  return socketPath;
};

/** A socket whose "daemon" answers the first bytes it gets with `reply` (raw frames). */
const rawDaemon = async (reply: string) => {
  const socketPath = path.join(tempDir(), 'raw.sock');
  const server = net.createServer((socket) => {
    socket.on('error', () => {});
    socket.once('data', () => socket.write(reply));
  });
  server.listen(socketPath);
  await once(server, 'listening');
  onTestFinished(async () => {
    server.close();
    await once(server, 'close');
  });
  return socketPath;
};

const helloOk = { ok: true, version: VERSION, pid: 1, root: '/r' };

describe('the one-shot client of the one-question commands', () => {
  it('gets from a real daemon what a vscode-jsonrpc client gets', async () => {
    const base = tempDir();
    const root = path.join(base, 'repo');
    const home = path.join(base, 'h');
    mkdirSync(path.join(root, '.git'), { recursive: true });
    mkdirSync(home);
    writeFileSync(
      path.join(home, 'config.yaml'),
      `mcpServers:\n  memory:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(serverBin('server-memory'))}]\n    env: { MEMORY_FILE_PATH: ${JSON.stringify(path.join(base, 'm.jsonl'))} }\n`,
    );
    const env = testEnv({ HOME: base, NIFFLER_HOME: home });
    let listening: () => void = () => {};
    const ready = new Promise<void>((resolve) => (listening = resolve));
    const running = runDaemon({ root, env, onListening: () => listening() });
    await ready;
    const socketPath = nifflerPaths(root, env).socket;
    const client = await connectSocket(socketPath);
    onTestFinished(async () => {
      await client.request('daemon/stop', {}).catch(() => undefined);
      client.close();
      await running;
    });
    const expected = await client.request('mcp/status', { wait: true });
    expect(expected.servers.map((s) => [s.name, s.state])).toEqual([['memory', 'ready']]);

    expect(await askOnce(socketPath, 'test', 'mcp/status', {})).toEqual({
      kind: 'answered',
      result: expected,
    });
    expect(await requestDaemon({ root, env, start: false }, 'mcp/status', {})).toEqual({
      result: expected,
      fallback: false,
    });
    const status = await askOnce(socketPath, 'test', 'daemon/status', {});
    expect(status).toMatchObject({ kind: 'answered', result: { version: VERSION, root } });
  });

  it('finds no daemon where there is no socket, or a stale one', async () => {
    const dir = tempDir();
    expect(await askOnce(path.join(dir, 'none.sock'), 'test', 'mcp/status', {})).toEqual({
      kind: 'absent',
    });
    // A file left where the socket was: nobody accepts on it.
    writeFileSync(path.join(dir, 'file.sock'), '');
    expect(await askOnce(path.join(dir, 'file.sock'), 'test', 'mcp/status', {})).toEqual({
      kind: 'absent',
    });
    const root = path.join(dir, 'repo');
    const env = testEnv({ HOME: dir, NIFFLER_HOME: path.join(dir, 'h') });
    expect(await requestDaemon({ root, env, start: false }, 'daemon/status', {})).toEqual({
      result: null,
      fallback: false,
    });
  });

  it('is refused by a daemon of another version, and ignores its answer', async () => {
    const socketPath = await stubDaemon(
      () => async (method) =>
        method === 'hello'
          ? { ok: false, reason: 'version-mismatch', version: '0.0.0-other', pid: 1 }
          : ({ servers: [], configError: null, warnings: [] } as never),
    );
    expect(await askOnce(socketPath, 'test', 'mcp/status', {})).toEqual({ kind: 'refused' });
  });

  it('waits out a daemon of another version and says it took the long way', async () => {
    const dir = tempDir();
    const root = path.join(dir, 'repo');
    const env = testEnv({ HOME: dir, NIFFLER_HOME: path.join(dir, 'h') });
    const socketPath = nifflerPaths(root, env).socket;
    mkdirSync(path.dirname(socketPath), { recursive: true });
    let hellos = 0;
    await stubDaemon(
      ({ stopListening }) =>
        async () => {
          // The old daemon refuses both hellos (ours, then vscode-jsonrpc's), then exits.
          if (++hellos === 2) stopListening();
          return { ok: false, reason: 'version-mismatch', version: '0.0.0-other', pid: 1 } as never;
        },
      socketPath,
    );
    expect(await requestDaemon({ root, env, start: false }, 'daemon/status', {})).toEqual({
      result: null,
      fallback: true,
    });
    expect(hellos).toBe(2);
  });

  it("rejects with the engine's own error, code and all", async () => {
    const socketPath = await stubDaemon(() => async (method) => {
      if (method === 'hello') return helloOk;
      throw new NifflerError('config-invalid', 'config.yaml:3: mcpServers must be a map', {
        file: 'config.yaml',
      });
    });
    const error = await askOnce(socketPath, 'test', 'mcp/status', {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NifflerError);
    expect(error).toMatchObject({
      code: 'config-invalid',
      message: 'config.yaml:3: mcpServers must be a map',
      data: { file: 'config.yaml' },
    });
  });

  it('declines what the daemon asks it, skips what it tells it, and still gets its answer', async () => {
    let declined: unknown;
    const socketPath = await stubDaemon(() => async (method, _params, { client }) => {
      if (method === 'hello') return helloOk;
      client.notify('config/changed', { ok: true, warnings: [] });
      declined = await client
        .ask('sampling/ask', { server: 's', summary: 'x', maxTokens: 1 })
        .catch((e: unknown) => e);
      return { servers: [], configError: null, warnings: ['after the question'] } as never;
    });
    expect(await askOnce(socketPath, 'test', 'mcp/status', {})).toEqual({
      kind: 'answered',
      result: { servers: [], configError: null, warnings: ['after the question'] },
    });
    expect(declined).toMatchObject({ code: -32601, message: 'mcp/status answers no sampling/ask' });
  });

  it('reports an error the engine did not make with its JSON-RPC code, and keeps it as the cause', async () => {
    const socketPath = await rawDaemon(
      frame({ id: 1, result: helloOk }) +
        frame({ id: 2, error: { code: -32603, message: 'internal error', data: { at: 'x' } } }),
    );
    const error = await askOnce(socketPath, 'test', 'mcp/status', {}).catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: 'daemon-unreachable',
      message: expect.stringMatching(
        /^the daemon failed \(JSON-RPC error -32603: internal error\) during mcp\/status; run the command again/,
      ),
      cause: { code: -32603, data: { at: 'x' } },
    });
  });

  it('rejects, and crashes nothing, on a frame that is not a JSON-RPC message', async () => {
    for (const body of ['null', '42', '[1]', '{"id":']) {
      const socketPath = await rawDaemon(`Content-Length: ${body.length}\r\n\r\n${body}`);
      const error = await askOnce(socketPath, 'test', 'mcp/status', {}).catch((e: unknown) => e);
      expect(error, body).toMatchObject({
        code: 'daemon-unreachable',
        message: expect.stringMatching(/^the daemon sent what is not JSON-RPC during mcp\/status/),
      });
    }
  });

  it('gives up on a daemon that takes the connection and never says hello', async () => {
    const socketPath = path.join(tempDir(), 'frozen.sock');
    const server = net.createServer((socket) => socket.on('error', () => {}));
    server.listen(socketPath);
    await once(server, 'listening');
    onTestFinished(() => void server.close());
    const error = await askOnce(socketPath, 'test', 'mcp/status', {}, { timeoutMs: 50 }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(NifflerError);
    expect(error).toMatchObject({
      code: 'daemon-unresponsive',
      message: `the niffler daemon on ${socketPath} is not responding (no answer within 0.05 s); run niffler daemon restart, or niffler daemon stop --force, or run this with --no-daemon`,
    });
  });

  it('reports a daemon that hangs up before it answers, and one that hangs up before hello', async () => {
    const working = await stubDaemon(({ hangUp }) => async (method) => {
      // The daemon dies while it works on the request, once its hello has gone out.
      if (method !== 'hello') return new Promise<never>(() => {});
      void replied(1).then(hangUp);
      return helloOk;
    });
    const error = await askOnce(working, 'test', 'mcp/status', {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NifflerError);
    expect(error).toMatchObject({
      code: 'daemon-unreachable',
      message: expect.stringMatching(
        /^the daemon closed the connection during mcp\/status; run the command again/,
      ),
    });

    const starting = await stubDaemon(({ hangUp }) => async () => {
      hangUp();
      return new Promise<never>(() => {});
    });
    expect(await askOnce(starting, 'test', 'mcp/status', {})).toEqual({ kind: 'refused' });
  });
});

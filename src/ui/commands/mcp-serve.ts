import path from 'node:path';
import type { EngineClient } from '../../main/daemon/client.ts';
import { usageError } from '../../main/errors.ts';
import { gatewayToken, isLoopbackHost, tokenDigest } from '../../main/gateway/token.ts';
import { findWorkspace, nifflerPaths, tildify } from '../../main/paths.ts';
import type { GlobalOptions } from '../context.ts';
import { openEngine } from '../engine.ts';
import { info, print, printJson, warn } from '../render/output.ts';

interface ServeOptions extends GlobalOptions {
  http?: boolean;
  port?: number;
  host?: string;
  tokenFile?: string;
  server?: string;
  allowRemote?: boolean;
}

/** The longest message a stdio consumer may send (as a Streamable HTTP body may be). */
const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

/**
 * Splits `stdin` into lines and hands each to `line`; a line longer than `MAX_MESSAGE_BYTES` is
 * dropped (`tooLong` says so) without being held whole. Resolves when stdin ends.
 */
const readLines = (
  stdin: NodeJS.ReadableStream,
  line: (text: string) => void,
  tooLong: () => void,
): Promise<void> =>
  new Promise((resolve) => {
    let parts: Buffer[] = [];
    let size = 0;
    let skipping = false;
    stdin.on('data', (chunk: Buffer) => {
      let start = 0;
      for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
        if (!skipping) parts.push(chunk.subarray(start, nl));
        const text = skipping ? '' : Buffer.concat(parts).toString('utf8').trim();
        if (text) line(text);
        parts = [];
        size = 0;
        skipping = false;
        start = nl + 1;
      }
      const rest = chunk.subarray(start);
      if (skipping || rest.length === 0) return;
      size += rest.length;
      if (size > MAX_MESSAGE_BYTES) {
        skipping = true;
        parts = [];
        tooLong();
      } else parts.push(rest);
    });
    stdin.once('end', () => resolve());
    stdin.once('error', () => resolve());
  });

/** The error a message over the size limit gets (its id cannot be read without holding it). */
const tooLongError = JSON.stringify({
  jsonrpc: '2.0',
  id: null,
  error: {
    code: -32600,
    message: `Invalid Request: a message over ${MAX_MESSAGE_BYTES / 1024 / 1024} MiB was dropped`,
  },
});

/** Relays this process's stdin/stdout to a gateway consumer in the daemon until either ends. */
const relayStdio = async (client: EngineClient, server: string | undefined): Promise<void> => {
  const { consumer } = await client.request('gateway/open', server ? { server } : {});
  const write = (text: string) => process.stdout.write(`${text}\n`);
  client.onNotification('gateway/message', (params) => {
    if (params.consumer === consumer) write(params.message);
  });
  const lost = new Promise<'lost'>((resolve) => client.onClose(() => resolve('lost')));
  const ended = readLines(
    process.stdin,
    (message) => client.notify('gateway/send', { consumer, message }),
    () => write(tooLongError),
  ).then(() => 'ended' as const);
  if ((await Promise.race([ended, lost])) === 'lost') {
    info('niffler: the daemon went away; the MCP client may start niffler mcp serve again');
    process.exitCode = 1;
  }
};

/** Why a bind that is not loopback needs `--allow-remote`, or what it means once given. */
const REMOTE_RISK =
  'every tool it serves (file writes, bash, your MCP servers) becomes reachable from the network by whoever has the token, over plain HTTP';

/** The bind address, after the loopback rule: a remote one needs `--allow-remote`. */
const bindHost = (options: ServeOptions): string => {
  const host = options.host ?? '127.0.0.1';
  if (isLoopbackHost(host)) return host;
  if (!options.allowRemote)
    throw usageError(
      `--host ${host} is not a loopback address: ${REMOTE_RISK}; add --allow-remote to bind it anyway (and put TLS in front)`,
    );
  warn(`binding ${host}: ${REMOTE_RISK}`);
  return host;
};

/** Serves the gateway over Streamable HTTP until SIGINT/SIGTERM or the daemon goes away. */
const serveHttp = async (client: EngineClient, options: ServeOptions): Promise<void> => {
  const host = bindHost(options);
  const { root } = findWorkspace(options.cwd ?? process.cwd());
  const file = options.tokenFile
    ? path.resolve(options.tokenFile)
    : nifflerPaths(root).gatewayTokenFile;
  const { token, created } = gatewayToken(file);
  const listening = await client.request('gateway/listen', {
    host,
    port: options.port ?? 0,
    tokenSha256: tokenDigest(token),
    ...(options.server ? { server: options.server } : {}),
    ...(options.allowRemote ? { remote: true } : {}),
  });
  if (options.json)
    printJson({ url: listening.url, tokenFile: file, ...(created ? { token } : {}) });
  else {
    print(`niffler gateway for ${root}: ${listening.url}`);
    print(
      created
        ? `bearer token (shown once; kept in ${tildify(file)}): ${token}`
        : `bearer token: in ${tildify(file)}`,
    );
  }
  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
    client.onClose(() => {
      info('niffler: the daemon went away; the gateway stopped');
      process.exitCode = 1;
      resolve();
    });
  });
};

/**
 * `niffler mcp serve`: this repository's warm tools as one MCP server, for another MCP client —
 * over stdio (its messages relayed to the gateway in the daemon), or Streamable HTTP.
 */
export const mcpServe = async (options: ServeOptions): Promise<void> => {
  if (!options.http && (options.port !== undefined || options.tokenFile || options.allowRemote))
    throw usageError('--port, --token-file and --allow-remote go with --http');
  const engine = await openEngine(options);
  try {
    if (options.http) await serveHttp(engine.client, options);
    else await relayStdio(engine.client, options.server);
  } finally {
    await engine.close();
  }
};

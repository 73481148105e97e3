import { spawn } from 'node:child_process';
import { onTestFinished } from 'vitest';
import {
  Client,
  StreamableHTTPClientTransport,
  type ClientCapabilities,
} from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { keepProgressInOrder } from '../../src/workers/mcp/in-order.ts';
import { CLI } from './cli.ts';
import type { makeE2eWorkspace } from './workspace.ts';

type Workspace = ReturnType<typeof makeE2eWorkspace>;

export type Era = 'legacy' | 'modern';

export interface ConsumerOptions {
  era?: Era;
  name?: string;
  capabilities?: ClientCapabilities;
}

/** An SDK client (v2) of the era asked for; 2026-07-28 pinned for `modern`. */
export const sdkClient = ({
  era = 'legacy',
  name = `test-${era}`,
  capabilities = {},
}: ConsumerOptions) =>
  new Client(
    { name, version: '1.0.0' },
    {
      capabilities,
      ...(era === 'modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {}),
    },
  );

/** A consumer of `niffler mcp serve` over stdio (the built binary), closed when the test ends. */
export const stdioConsumer = async (
  ws: Workspace,
  options: ConsumerOptions & { args?: string[]; setup?: (client: Client) => void } = {},
): Promise<Client> => {
  const client = sdkClient(options);
  options.setup?.(client);
  // The SDK's client drops a last progress that arrives with its result (see in-order.ts).
  const transport = keepProgressInOrder(
    new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp', 'serve', '-C', ws.repo, ...(options.args ?? [])],
      env: ws.env,
      cwd: ws.base,
      stderr: 'pipe',
    }),
  );
  await client.connect(transport);
  onTestFinished(() => client.close());
  return client;
};

export interface HttpGateway {
  url: string;
  token: string;
  tokenFile: string;
  stop(): Promise<void>;
}

/** Runs `niffler mcp serve --http --json ARGS` and reads where it listens; stopped at the end. */
export const httpGateway = async (ws: Workspace, args: string[] = []): Promise<HttpGateway> => {
  const child = spawn(process.execPath, [CLI, 'mcp', 'serve', '--http', '--json', ...args], {
    cwd: ws.repo,
    env: ws.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const listening = await new Promise<{ url: string; token?: string; tokenFile: string }>(
    (resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.trimEnd().endsWith('}')) resolve(JSON.parse(out) as never);
      });
      void exited.then(() => reject(new Error(`mcp serve --http exited: ${err}`)));
    },
  );
  const stop = async () => {
    child.kill('SIGINT');
    await exited;
  };
  onTestFinished(stop);
  const token =
    listening.token ?? (await import('node:fs')).readFileSync(listening.tokenFile, 'utf8').trim();
  return { url: listening.url, token, tokenFile: listening.tokenFile, stop };
};

/** A consumer of an HTTP gateway (bearer token in every request), closed when the test ends. */
export const httpConsumer = async (
  gateway: Pick<HttpGateway, 'url' | 'token'>,
  options: ConsumerOptions & { setup?: (client: Client) => void } = {},
): Promise<Client> => {
  const client = sdkClient(options);
  options.setup?.(client);
  const transport = keepProgressInOrder(
    new StreamableHTTPClientTransport(new URL(gateway.url), {
      requestInit: { headers: { Authorization: `Bearer ${gateway.token}` } },
    }),
  );
  await client.connect(transport);
  onTestFinished(() => client.close());
  return client;
};

/** YAML of one stdio fixture server (test/fixtures/mcp/<name>.ts) run with tsx. */
export const fixtureYaml = (name: string, fixture: string, extra = ''): string =>
  `  ${name}:\n    command: ${JSON.stringify(process.execPath)}\n    args: ["--import", ${JSON.stringify(import.meta.resolve('tsx'))}, ${JSON.stringify(new URL(`../fixtures/mcp/${fixture}.ts`, import.meta.url).pathname)}]\n${extra}`;

/** The text of a tool result's first block. */
export const textOf = (result: unknown): string => {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.find((c) => c.type === 'text')?.text ?? '';
};

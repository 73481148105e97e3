import { existsSync, readdirSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { execa } from 'execa';
import { benchCacheDir } from './harness.ts';

// Codex (OpenAI's agent, a native Rust binary, `@openai/codex` on npm) as a reference row of the
// cold-start bench. It is no dependency of niffler: the bench installs it into its own cache when
// asked (NIFFLER_BENCH_CODEX=install), uses a given binary (NIFFLER_BENCH_CODEX=/path/to/codex),
// or one installed before, and skips the row, saying why, otherwise. It talks only to loopback:
// its provider is a fake Responses endpoint here, update checks and analytics are off, and a
// proxy that refuses every connection stands for the rest of the network.

/** Where the bench installs Codex (kept between runs, ignored by git). */
export const codexCacheDir = path.join(benchCacheDir, 'codex');

/** The pinned version the bench installs. */
const CODEX_VERSION = '0.171.0';

/** The platform binary npm put under the cache (the `codex` wrapper only spawns it). */
const installedBinary = (): string | undefined => {
  const scope = path.join(codexCacheDir, 'node_modules', '@openai');
  if (!existsSync(scope)) return undefined;
  for (const pkg of readdirSync(scope).filter((name) => name.startsWith('codex-'))) {
    const vendor = path.join(scope, pkg, 'vendor');
    if (!existsSync(vendor)) continue;
    for (const triple of readdirSync(vendor)) {
      const binary = path.join(vendor, triple, 'bin', 'codex');
      if (existsSync(binary)) return binary;
    }
  }
  return undefined;
};

/** The Codex binary to measure, or why there is none. */
export const findCodex = async (): Promise<{ binary: string } | { skipped: string }> => {
  const asked = process.env['NIFFLER_BENCH_CODEX'];
  if (asked && asked !== 'install')
    return existsSync(asked)
      ? { binary: asked }
      : { skipped: `NIFFLER_BENCH_CODEX=${asked} does not exist` };
  const installed = installedBinary();
  if (installed) return { binary: installed };
  if (asked !== 'install')
    return {
      skipped:
        'no Codex binary: run the bench with NIFFLER_BENCH_CODEX=install (npm installs @openai/codex into node_modules/.cache/niffler-bench/codex) or NIFFLER_BENCH_CODEX=/path/to/codex',
    };
  const npm = await execa(
    'npm',
    [
      'install',
      '--no-save',
      '--no-audit',
      '--no-fund',
      '--prefix',
      codexCacheDir,
      `@openai/codex@${CODEX_VERSION}`,
    ],
    { reject: false, stdin: 'ignore' },
  );
  const binary = installedBinary();
  return binary
    ? { binary }
    : {
        skipped: `@openai/codex could not be installed (npm exited ${npm.exitCode}): ${String(npm.stderr).split('\n').slice(-3).join(' ')}`,
      };
};

/** A fake OpenAI Responses endpoint on loopback: answers "ok", notes when each request came. */
export interface FakeResponses {
  url: string;
  /** Epoch ms of each POST …/responses, in order. */
  arrivals: number[];
  close(): Promise<void>;
}

export const startFakeResponses = async (): Promise<FakeResponses> => {
  const arrivals: number[] = [];
  const server = http.createServer((req, res) => {
    if (req.method !== 'POST' || !req.url?.endsWith('/responses')) {
      res.writeHead(404).end();
      return;
    }
    arrivals.push(performance.timeOrigin + performance.now());
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const event = (type: string, data: object) =>
        res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
      const id = `resp_${arrivals.length}`;
      event('response.created', { response: { id } });
      event('response.output_item.done', {
        output_index: 0,
        item: {
          type: 'message',
          role: 'assistant',
          id: 'msg_1',
          content: [{ type: 'output_text', text: 'ok' }],
        },
      });
      event('response.completed', {
        response: { id, usage: { input_tokens: 10, output_tokens: 1, total_tokens: 11 } },
      });
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    arrivals,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
};

/** A TOML string. */
const toml = (value: string): string => JSON.stringify(value);

/**
 * Codex's config.toml for the bench: the fake endpoint as its only provider, no update check, no
 * analytics, and the same MCP servers as niffler's.
 */
export const codexConfig = (
  url: string,
  servers: { name: string; command: string; args: string[]; env?: Record<string, string> }[],
): string =>
  [
    'model = "fake-model"',
    'model_provider = "fake"',
    'check_for_update_on_startup = false',
    '[analytics]',
    'enabled = false',
    '[model_providers.fake]',
    'name = "fake"',
    `base_url = ${toml(url)}`,
    'wire_api = "responses"',
    'env_key = "FAKE_RESPONSES_KEY"',
    ...servers.flatMap((s) => [
      `[mcp_servers.${s.name}]`,
      `command = ${toml(s.command)}`,
      `args = [${s.args.map(toml).join(', ')}]`,
      ...(s.env
        ? [
            `env = { ${Object.entries(s.env)
              .map(([k, v]) => `${k} = ${toml(v)}`)
              .join(', ')} }`,
          ]
        : []),
    ]),
    '',
  ].join('\n');

/** The environment Codex runs in: its own home, the fake's key, every other host unreachable. */
export const codexEnv = (
  base: Record<string, string>,
  codexHome: string,
): Record<string, string> => ({
  ...base,
  CODEX_HOME: codexHome,
  FAKE_RESPONSES_KEY: 'bench',
  // Whatever it would reach beyond loopback goes to a proxy that refuses every connection.
  HTTPS_PROXY: 'http://127.0.0.1:9',
  HTTP_PROXY: 'http://127.0.0.1:9',
  ALL_PROXY: 'http://127.0.0.1:9',
  NO_PROXY: '127.0.0.1,localhost',
});

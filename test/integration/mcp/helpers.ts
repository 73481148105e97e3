import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { McpHost, type McpHostOptions } from '../../../src/main/threads/mcp.ts';
import type {
  McpServerSpec,
  McpServerStatus,
  McpWorkerData,
} from '../../../src/workers/protocol/mcp.ts';

export interface TestHost {
  host: McpHost;
  data: McpWorkerData;
  dir: string;
}

/** A real MCP worker over temp dirs, with fast restarts; close it in `afterAll`/`onTestFinished`. */
export const startHost = async (
  servers: McpServerSpec[],
  overrides: Partial<McpWorkerData> = {},
  options: McpHostOptions = {},
): Promise<TestHost> => {
  const dir = mkdtempSync(path.join(tmpdir(), 'niffler-mcp-'));
  const root = path.join(dir, 'repo');
  mkdirSync(root);
  const data: McpWorkerData = {
    servers,
    root,
    roots: [root],
    logsDir: path.join(dir, 'logs'),
    outputsDir: path.join(dir, 'outputs'),
    logLevel: 'debug',
    ...overrides,
    health: { initialDelayMs: 50, maxDelayMs: 400, killGraceMs: 1_000, ...overrides.health },
  };
  return { host: await McpHost.start(data, options), data, dir };
};

/** Waits for `server` to settle at ready (or fails the test with its last error). */
export const ready = async (host: McpHost, server: string): Promise<McpServerStatus> => {
  const status = await host.waitForStatus(
    server,
    (s) => s.state === 'ready' || s.state === 'failed',
  );
  if (status.state !== 'ready')
    throw new Error(`server ${server} failed: ${status.lastError?.message}`);
  return status;
};

/** True while a process (or, with a negative pid, a process group) exists. */
export const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** A text result's output, or the error message. */
export const text = (result: {
  ok: boolean;
  output?: string;
  error?: { message: string };
}): string => (result.ok ? (result.output ?? '') : `ERROR ${result.error?.message}`);

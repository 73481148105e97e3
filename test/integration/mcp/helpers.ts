import { mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { McpHost } from '../../../src/main/threads/mcp.ts';
import type { McpHostOptions } from '../../../src/main/threads/mcp-types.ts';
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

const stateOf = (pid: number): { state: string; pgrp: number } | undefined => {
  try {
    // /proc/<pid>/stat: "pid (comm) state ppid pgrp …"; comm may hold spaces, so split after ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: state!, pgrp: Number(pgrp) };
  } catch {
    return undefined;
  }
};

/**
 * True while a process runs (a zombie waiting to be reaped counts as gone); with a negative pid,
 * while any process of that group runs. Linux only (/proc).
 */
export const isAlive = (pid: number): boolean => {
  if (pid > 0) {
    const s = stateOf(pid);
    return s !== undefined && s.state !== 'Z';
  }
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .some((name) => {
      const s = stateOf(Number(name));
      return s !== undefined && s.pgrp === -pid && s.state !== 'Z';
    });
};

/** A text result's output, or the error message. */
export const text = (result: {
  ok: boolean;
  output?: string;
  error?: { message: string };
}): string => (result.ok ? (result.output ?? '') : `ERROR ${result.error?.message}`);

import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { onTestFinished } from 'vitest';
import { niffler } from './cli.ts';
import { testEnv } from '../fixtures/env.ts';
import { serverBin } from '../fixtures/mcp/servers.ts';

export { serverBin };

/** YAML for the three published servers, runnable from a clean clone. */
export const publishedServersYaml = (dataDir: string): string => `mcpServers:
  everything:
    command: ${JSON.stringify(process.execPath)}
    args: [${JSON.stringify(serverBin('server-everything'))}, stdio]
  filesystem:
    command: ${JSON.stringify(process.execPath)}
    args: [${JSON.stringify(serverBin('server-filesystem'))}, ${JSON.stringify(dataDir)}]
  memory:
    command: ${JSON.stringify(process.execPath)}
    args: [${JSON.stringify(serverBin('server-memory'))}]
    env:
      MEMORY_FILE_PATH: ${JSON.stringify(path.join(dataDir, 'memory.jsonl'))}
`;

/**
 * A temp HOME/NIFFLER_HOME and git repository for an e2e test. On finish, the daemon of the
 * workspace is stopped (so no test leaves processes behind) and the directories removed.
 */
export const makeE2eWorkspace = () => {
  // Short base path: the daemon socket lives under NIFFLER_HOME and Unix socket paths are short.
  const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'nf-')));
  const home = path.join(base, 'h');
  const repo = path.join(base, 'repo');
  const data = path.join(base, 'data');
  for (const dir of [home, repo, data, path.join(repo, '.git')])
    mkdirSync(dir, { recursive: true });
  const env = testEnv({ HOME: base, NIFFLER_HOME: home, NO_COLOR: '1' });
  const run = (args: string[], input?: string) =>
    niffler(args, { cwd: repo, env, ...(input !== undefined ? { input } : {}) });
  onTestFinished(async () => {
    await run(['daemon', 'stop']);
    rmSync(base, { recursive: true, force: true });
  });
  const write = (file: string, text: string) => {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
  };
  return {
    base,
    home,
    repo,
    data,
    env,
    run,
    runJson: async <T>(args: string[]): Promise<T> => {
      const result = await run([...args, '--json']);
      if (result.exitCode !== 0)
        throw new Error(`niffler ${args.join(' ')} exited ${result.exitCode}: ${result.stderr}`);
      return JSON.parse(result.stdout) as T;
    },
    writeGlobal: (text: string) => write(path.join(home, 'config.yaml'), text),
    writeRepo: (text: string) => write(path.join(repo, '.niffler', 'config.yaml'), text),
  };
};

export { isAlive } from '../../src/main/daemon/lifecycle.ts';

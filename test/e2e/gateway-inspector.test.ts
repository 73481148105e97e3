import { createRequire } from 'node:module';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { CLI } from './cli.ts';
import { httpGateway } from './gateway.ts';
import { makeE2eWorkspace, serverBin } from './workspace.ts';

const require = createRequire(import.meta.url);
/** The MCP Inspector's launcher (`mcp-inspector`), a devDependency. */
const INSPECTOR = path.join(
  path.dirname(require.resolve('@modelcontextprotocol/inspector/package.json')),
  'clients/launcher/build/index.js',
);

const everything = `mcpServers:
  everything:
    command: ${JSON.stringify(process.execPath)}
    args: [${JSON.stringify(serverBin('server-everything'))}, stdio]
`;

/** `mcp-inspector --cli ARGS` in the workspace (its catalog under the test's HOME). */
const inspect = async (ws: ReturnType<typeof makeE2eWorkspace>, args: string[]) => {
  const result = await execa(process.execPath, [INSPECTOR, '--cli', ...args], {
    cwd: ws.repo,
    env: ws.env,
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
    timeout: 60_000,
  });
  return {
    exitCode: result.exitCode,
    stdout: String(result.stdout),
    stderr: String(result.stderr),
  };
};

describe('the MCP Inspector CLI against niffler mcp serve', () => {
  it('lists and calls tools over stdio', async () => {
    const ws = makeE2eWorkspace();
    ws.writeGlobal(everything);
    // The inspector gives a stdio server a default environment: NIFFLER_HOME goes with -e.
    const target = [
      '-e',
      `NIFFLER_HOME=${ws.home}`,
      process.execPath,
      CLI,
      'mcp',
      'serve',
      '-C',
      ws.repo,
    ];
    const listed = await inspect(ws, [...target, '--method', 'tools/list']);
    expect(listed.exitCode, listed.stderr).toBe(0);
    expect(listed.stdout).toContain('everything__echo');
    expect(listed.stdout).toContain('read_file');
    const called = await inspect(ws, [
      ...target,
      '--method',
      'tools/call',
      '--tool-name',
      'everything__echo',
      '--tool-arg',
      'message=from the inspector',
    ]);
    expect(called.exitCode, called.stderr).toBe(0);
    expect(called.stdout).toContain('Echo: from the inspector');
  });

  it('lists and calls tools over Streamable HTTP with the bearer token', async () => {
    const ws = makeE2eWorkspace();
    ws.writeGlobal(everything);
    const gateway = await httpGateway(ws);
    const target = [
      gateway.url,
      '--transport',
      'http',
      '--header',
      `Authorization: Bearer ${gateway.token}`,
    ];
    const listed = await inspect(ws, [...target, '--method', 'tools/list']);
    expect(listed.exitCode, listed.stderr).toBe(0);
    expect(listed.stdout).toContain('everything__echo');
    const called = await inspect(ws, [
      ...target,
      '--method',
      'tools/call',
      '--tool-name',
      'everything__get-sum',
      '--tool-arg',
      'a=2',
      'b=3',
    ]);
    expect(called.exitCode, called.stderr).toBe(0);
    expect(called.stdout).toContain('5');
  });
});

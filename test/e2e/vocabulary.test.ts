import { describe, expect, it } from 'vitest';
import { TRUST_LEVELS } from '../../src/main/config/trust-levels.ts';
import { MCP_SERVER_STATES } from '../../src/workers/protocol/mcp.ts';
import { LSP_SERVER_STATES } from '../../src/workers/protocol/lsp.ts';
import { makeE2eWorkspace, serverBin } from './workspace.ts';

/** The cells of one column of a table printed by niffler, keyed by the NAME column. */
const column = (table: string, header: string): Record<string, string> => {
  const [head, ...rows] = table.split('\n').filter((line) => line.trim() && !line.startsWith(' '));
  const at = head!.indexOf(header);
  const next = head!.slice(at + header.length).search(/\S/);
  const end = next < 0 ? undefined : at + header.length + next;
  return Object.fromEntries(
    rows
      .filter((row) => /^\S/.test(row))
      .map((row) => [row.split(/\s+/)[0]!, row.slice(at, end).trim()]),
  );
};

const memory = (data: string) =>
  `    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(serverBin('server-memory'))}]\n    env: { MEMORY_FILE_PATH: ${JSON.stringify(`${data}/m.jsonl`)} }\n`;

describe('one vocabulary for states across tables, JSON and --help', () => {
  it('mcp list and mcp status say the same word in the table as in JSON, and --help names them all', async () => {
    const ws = makeE2eWorkspace();
    ws.writeGlobal(
      `mcpServers:\n  mine:\n${memory(ws.data)}  off:\n    enabled: false\n${memory(ws.data)}`,
    );
    ws.writeRepo(`mcpServers:\n  theirs:\n${memory(ws.data)}`);
    const list = await ws.run(['mcp', 'list']);
    const listed = await ws.runJson<{ name: string; trust: string }[]>(['mcp', 'list']);
    const trust = column(list.stdout, 'TRUST');
    expect(listed.map((s) => [s.name, s.trust])).toEqual([
      ['mine', 'yours'],
      ['off', 'yours'],
      ['theirs', 'untrusted'],
    ]);
    for (const server of listed) expect(trust[server.name]).toBe(server.trust);

    const status = await ws.run(['mcp', 'status', '--wait']);
    const json = await ws.runJson<{ servers: { name: string; state: string }[] }>([
      'mcp',
      'status',
    ]);
    const states = column(status.stdout, 'STATE');
    expect(json.servers.map((s) => [s.name, s.state])).toEqual([
      ['mine', 'ready'],
      ['off', 'disabled'],
      ['theirs', 'untrusted'],
    ]);
    for (const server of json.servers) expect(states[server.name]).toBe(server.state);

    const help = (await ws.run(['mcp', '--help'])).stdout.replace(/\s+/g, ' ');
    expect(help).toContain(`trust (${TRUST_LEVELS.join(' | ')})`);
    expect(help).toContain(`state (${MCP_SERVER_STATES.join(' | ')})`);
  });

  it('lsp status says the same state in the table as in JSON, and --help names them all', async () => {
    const ws = makeE2eWorkspace();
    ws.writeGlobal(
      'lsp:\n  go:\n    enabled: false\n  typescript:\n    command: /nowhere/typescript-language-server\n',
    );
    const table = await ws.run(['lsp', 'status']);
    const json = await ws.runJson<{ servers: { name: string; state: string }[] }>([
      'lsp',
      'status',
    ]);
    const states = column(table.stdout, 'STATE');
    expect(json.servers.map((s) => [s.name, s.state])).toEqual([
      ['typescript', 'missing'],
      ['python', 'untrusted'],
      ['go', 'disabled'],
      ['rust', 'untrusted'],
    ]);
    for (const server of json.servers) expect(states[server.name]).toBe(server.state);
    const help = (await ws.run(['lsp', '--help'])).stdout.replace(/\s+/g, ' ');
    expect(help).toContain(`state (${LSP_SERVER_STATES.join(' | ')})`);
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { McpHost } from '../../src/main/threads/mcp.ts';
import type { McpToolInfo } from '../../src/workers/protocol/mcp.ts';

// Conformance driver: `client.ts <server-url>`, scenario in MCP_CONFORMANCE_SCENARIO. It goes
// through niffler's own MCP layer — McpHost, the worker thread, ServerConnection and its SDK
// transports — connects, lists, then calls every tool with arguments made from its schema.
// Elicitations are accepted with no fields, so the schema defaults our client applies are sent.

const url = process.argv.at(-1);
const scenario = process.env['MCP_CONFORMANCE_SCENARIO'] ?? '(none)';
if (!url?.startsWith('http')) {
  console.error('usage: client.ts <server-url>');
  process.exit(2);
}

/** A value that satisfies a JSON Schema well enough for a test call. */
const sample = (schema: Record<string, unknown> | undefined): unknown => {
  if (!schema) return null;
  if (Array.isArray(schema['enum'])) return schema['enum'][0];
  if (schema['default'] !== undefined) return schema['default'];
  switch (schema['type']) {
    case 'number':
    case 'integer':
      return 1;
    case 'boolean':
      return true;
    case 'array':
      return [];
    case 'object': {
      const properties = (schema['properties'] ?? {}) as Record<string, Record<string, unknown>>;
      return Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, sample(v)]));
    }
    default:
      return 'test';
  }
};

const dir = mkdtempSync(path.join(tmpdir(), 'niffler-conformance-'));
const host = await McpHost.start({
  servers: [
    {
      name: 'conformance',
      displayName: 'conformance',
      transport: 'http',
      url,
      timeoutMs: 20_000,
      startupTimeoutMs: 15_000,
      maxConcurrency: 4,
      autoStart: true,
      gate: 'startable',
    },
  ],
  root: dir,
  roots: [dir],
  logsDir: path.join(dir, 'logs'),
  outputsDir: path.join(dir, 'outputs'),
  logLevel: 'info',
  health: { maxFailures: 1 },
});
host.setElicitationHandler(({ elicitation }) => {
  console.error(`elicitation: ${elicitation.message}`);
  return Promise.resolve({ action: 'accept', content: {} });
});

let failed = false;
try {
  const status = await host.waitForStatus(
    'conformance',
    (s) => s.state === 'ready' || s.state === 'failed',
  );
  if (status.state !== 'ready') throw new Error(status.lastError?.message ?? 'server failed');
  const tools: McpToolInfo[] = await host.listTools();
  console.error(`${scenario}: connected, ${tools.length} tool(s)`);
  for (const tool of tools) {
    const args = sample(tool.inputSchema) as Record<string, unknown>;
    const result = await host.callTool(tool.name, args);
    console.error(`${tool.name}(${JSON.stringify(args)}) → ${JSON.stringify(result)}`);
    if (!result.ok) failed = true;
  }
} catch (error) {
  console.error(`${scenario}: ${(error as Error).message}`);
  failed = true;
} finally {
  await host.close();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);

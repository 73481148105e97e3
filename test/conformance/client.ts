import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { McpHost } from '../../src/main/threads/mcp.ts';
import type { McpOAuthSpec, McpToolInfo } from '../../src/workers/protocol/mcp.ts';

// Conformance driver: `client.ts <server-url>`, scenario in MCP_CONFORMANCE_SCENARIO, credentials
// in MCP_CONFORMANCE_CONTEXT, revision in MCP_CONFORMANCE_PROTOCOL_VERSION. It goes through
// niffler's own MCP layer — McpHost, the worker thread, ServerConnection, its SDK transports and
// its OAuth client — with the server's `protocol: auto` (what a user gets: server/discover, and
// initialize where the server is older). It starts the server by hand (as `niffler mcp login`
// does), lists, calls every tool with arguments made from its schema (or the calls the scenario
// names in its context), then reads every resource and gets every prompt.
// When an authorization URL appears in the server's status, this driver plays the user's browser:
// it asks the authorization endpoint without following its redirect, then delivers the `Location`
// (code and state) to niffler's loopback receiver. Elicitations are accepted with no fields, so
// the schema defaults our client applies are sent.

const url = process.argv.at(-1);
const scenario = process.env['MCP_CONFORMANCE_SCENARIO'] ?? '(none)';
if (!url?.startsWith('http')) {
  console.error('usage: client.ts <server-url>');
  process.exit(2);
}
const dir = mkdtempSync(path.join(tmpdir(), 'niffler-conformance-'));

/** The `oauth` config a user of this scenario would write, from the suite's context. */
const oauthFor = (context: Record<string, string>): McpOAuthSpec => {
  const client = {
    ...(context['client_id'] ? { clientId: context['client_id'] } : {}),
    ...(context['client_secret'] ? { clientSecret: context['client_secret'] } : {}),
  };
  if (context['idp_id_token'])
    return {
      grant: 'cross_app',
      ...client,
      idp: {
        tokenEndpoint: context['idp_token_endpoint']!,
        clientId: context['idp_client_id']!,
        idToken: context['idp_id_token'],
      },
    };
  // Workload identity federation: the workload's own JWT, through the jwt-bearer grant.
  if (context['valid_jwt'])
    return { grant: 'jwt_bearer', ...client, assertion: context['valid_jwt'] };
  if (context['private_key_pem']) {
    const keyFile = path.join(dir, 'client-key.pem');
    writeFileSync(keyFile, context['private_key_pem'], { mode: 0o600 });
    return {
      grant: 'client_credentials',
      ...client,
      privateKeyFile: keyFile,
      signingAlgorithm: context['signing_algorithm'] ?? 'ES256',
    };
  }
  if (scenario.includes('client-credentials')) return { grant: 'client_credentials', ...client };
  if (client.clientId) return client;
  return { clientMetadataUrl: 'https://conformance-test.local/client-metadata.json' };
};

/** What a browser does with the authorization URL: the server's redirect goes to our receiver. */
const browse = async (authUrl: string): Promise<void> => {
  const response = await fetch(authUrl, { redirect: 'manual' });
  const location = response.headers.get('location');
  if (!location)
    throw new Error(`the authorization endpoint answered ${response.status}, no redirect`);
  await (await fetch(location)).text();
};

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

const context = JSON.parse(process.env['MCP_CONFORMANCE_CONTEXT'] ?? '{}') as Record<
  string,
  string
> & { toolCalls?: { name: string; arguments: Record<string, unknown> }[] };
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
      autoStart: false,
      gate: 'startable',
      oauth: oauthFor(context),
      protocol: 'auto',
    },
  ],
  root: dir,
  roots: [dir],
  logsDir: path.join(dir, 'logs'),
  outputsDir: path.join(dir, 'outputs'),
  logLevel: 'info',
  health: { maxFailures: 1 },
});
const browsed = new Set<string>();
host.on((event) => {
  if (event.type !== 'status' || !event.status.authUrl || browsed.has(event.status.authUrl)) return;
  browsed.add(event.status.authUrl);
  browse(event.status.authUrl).catch((error: unknown) =>
    console.error(`browser: ${(error as Error).message}`),
  );
});
host.setElicitationHandler(({ elicitation }) => {
  console.error(`elicitation: ${elicitation.message}`);
  return Promise.resolve({ action: 'accept', content: {} });
});

let failed = false;
try {
  const status = await host.login('conformance');
  if (status.state !== 'ready') throw new Error(status.lastError?.message ?? 'server failed');
  console.error(`${scenario}: connected over ${status.protocolVersion ?? '?'}`);
  const tools: McpToolInfo[] = await host.listTools();
  console.error(`${scenario}: ${tools.length} tool(s)`);
  const calls =
    context.toolCalls?.map((c) => ({ name: `conformance__${c.name}`, args: c.arguments })) ??
    tools.map((tool) => {
      // A tool asking for a `schema` gets another tool's inputSchema as niffler holds it: the
      // suite checks that schemas reach us whole (json-schema-2020-12-preservation).
      const other = tools.find((t) => t !== tool);
      const properties = (tool.inputSchema['properties'] ?? {}) as Record<string, unknown>;
      const args =
        properties['schema'] !== undefined && other
          ? { schema: other.inputSchema }
          : (sample(tool.inputSchema) as Record<string, unknown>);
      return { name: tool.name, args };
    });
  for (const { name, args } of calls) {
    const result = await host.callTool(name, args);
    console.error(`${name}(${JSON.stringify(args)}) → ${JSON.stringify(result)}`);
    if (!result.ok) failed = true;
  }
  for (const resource of await host.listResources()) {
    const result = await host.readResource('conformance', resource.uri);
    console.error(`read ${resource.uri} → ${JSON.stringify(result).slice(0, 300)}`);
  }
  for (const prompt of await host.listPrompts()) {
    const args = Object.fromEntries((prompt.arguments ?? []).map((a) => [a.name, 'test']));
    const result = await host.getPrompt('conformance', prompt.name, args);
    console.error(`prompt ${prompt.name} → ${JSON.stringify(result).slice(0, 300)}`);
  }
} catch (error) {
  console.error(`${scenario}: ${(error as Error).message}`);
  failed = true;
} finally {
  await host.close();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);

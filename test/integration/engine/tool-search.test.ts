import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { reply } from '../../fixtures/fake-llm/reply.ts';
import { serverBin } from '../../fixtures/mcp/servers.ts';
import { startHarness } from './harness.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const catalogTs = path.resolve(here, '../../fixtures/mcp/catalog.ts');
const catalog = JSON.parse(
  readFileSync(path.resolve(here, '../../fixtures/mcp/catalog/tools.json'), 'utf8'),
) as { server: string }[];
const tsx = import.meta.resolve('tsx');

/** YAML for 313 tools of real MCP servers: the 14 catalog fixtures and the three published ones. */
const manyServers = (data: string): string =>
  [
    ...[...new Set(catalog.map((t) => t.server))].map(
      (name) =>
        `  ${name}:\n    command: ${JSON.stringify(process.execPath)}\n    args: [--import, ${JSON.stringify(tsx)}, ${JSON.stringify(catalogTs)}, ${name}]\n`,
    ),
    `  everything:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(serverBin('server-everything'))}, stdio]\n`,
    `  filesystem:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(serverBin('server-filesystem'))}, ${JSON.stringify(data)}]\n`,
    `  memory:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(serverBin('server-memory'))}]\n`,
  ].join('');

describe.each(['native', 'text'] as const)(
  'tool search over 313 MCP tools (%s tool protocol)',
  (protocol) => {
    it('the request stays small, and the model finds and calls the right tool through tool_search', async () => {
      const h = await startHarness('in-process', {
        mcp: manyServers(path.join(here, '..', '..', 'fixtures')),
        model: `    toolProtocol: ${protocol}\n    contextWindow: 128000\n`,
        config: 'agent:\n  git: false\n',
      });
      const call = (name: string, args: Record<string, unknown>) =>
        protocol === 'native' ? reply().tool(name, args) : reply().textToolCall(name, args);
      h.llm.queue(
        call('tool_search', { query: 'open a pull request from my branch' }),
        call('github__create_pull_request', {
          owner: 'o',
          repo: 'r',
          title: 'Fix',
          head: 'fix',
          base: 'main',
        }),
        reply().text('Opened it.'),
      );
      h.answer = () => 'once';
      const id = await h.open();
      const summary = await h.prompt(id, 'open a PR for the fix branch');
      expect(summary).toMatchObject({ outcome: 'answered', text: 'Opened it.', denied: [] });

      const [first, second, third] = h.llm.requests;
      const bytes = JSON.stringify(first!.body).length;
      // The system prompt and the built-ins' definitions (grep's and glob's output modes, the
      // skill and lsp tools); none of the 313 MCP tools' schemas.
      expect(bytes).toBeLessThan(14_336);
      const sent = (r: typeof first) => JSON.stringify(r!.body);
      expect(sent(first)).toContain('tool_search');
      expect(sent(first)).toContain('github__*: 38 tools of the github server');
      expect(sent(first)).not.toContain('"head"');
      // Found by the first search, its whole definition joins the next request.
      expect(sent(second)).toContain('github__create_pull_request');
      expect(sent(second)).toContain('Loaded ');
      expect(sent(third)).toContain('called github__create_pull_request with');
      expect(h.approvals.map((a) => a.tool)).toEqual(['github__create_pull_request']);
    }, 60_000);
  },
);

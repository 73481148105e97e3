import { describe, expect, it } from 'vitest';
import { reply } from '../../fixtures/fake-llm/reply.ts';
import { fixtureSpec } from '../../fixtures/mcp/servers.ts';
import { startHarness } from './harness.ts';

const toolNames = (body: { tools?: { function: { name: string } }[] }) =>
  (body.tools ?? []).map((t) => t.function.name);

describe('tools of a server that becomes ready during a turn', () => {
  it('join the turn at its next request to the model', async () => {
    const echo = fixtureSpec('echo');
    const h = await startHarness('in-process', {
      mcp: `  echo:\n    command: ${JSON.stringify(echo.command)}\n    args: ${JSON.stringify(echo.args)}\n    autoStart: false\n`,
    });
    // While the turn waits for an approval, the server is started and is ready.
    h.answer = async () => {
      await h.client.request('mcp/start', { name: 'echo' });
      return 'deny' as const;
    };
    h.llm.queue(reply().tool('write_file', { path: 'x.txt', content: 'x' }), reply().text('done'));
    const summary = await h.prompt(await h.open(), 'go');
    expect(summary.outcome).toBe('answered');
    const [first, second] = h.llm.requests;
    expect(toolNames(first!.body)).not.toContain('echo__say');
    expect(toolNames(second!.body)).toContain('echo__say');
  });
});

import { describe, expect, it } from 'vitest';
import { builtinTool } from '../../../src/main/engine/capabilities.ts';
import { builtinTools } from '../../../src/workers/protocol/tools.ts';
import { reply } from '../../fixtures/fake-llm/reply.ts';
import { startHarness } from './harness.ts';

/** What the gateway and the capability filter hold of a built-in (its MCP annotations). */
const catalogOf = (name: string) => builtinTool(builtinTools().find((t) => t.name === name)!);

describe("a built-in's traits are the same wherever they are read", () => {
  it('the approval dialog calls a tool destructive exactly when the gateway does', async () => {
    const h = await startHarness('in-process', {
      config: 'tools:\n  policy:\n    todo: ask\n',
      mcp: '  {}\n',
    });
    h.llm.queue(
      reply().tool('todo', { action: 'list' }),
      reply().tool('write_file', { path: 'w.txt', content: 'x' }),
      reply().text('done'),
    );
    const id = await h.open();
    expect((await h.prompt(id, 'plan, then write')).outcome).toBe('answered');
    expect(h.approvals.map(({ tool, destructive }) => ({ tool, destructive }))).toEqual([
      { tool: 'todo', destructive: catalogOf('todo').destructive },
      { tool: 'write_file', destructive: catalogOf('write_file').destructive },
    ]);
    // todo changes only the session's own list; write_file changes the workspace
    expect(catalogOf('todo').destructive).toBe(false);
    expect(catalogOf('write_file').destructive).toBe(true);
  });
});

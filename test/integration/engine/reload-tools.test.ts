import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EngineNotifications } from '../../../src/main/protocol.ts';
import { reply } from '../../fixtures/fake-llm/reply.ts';
import { startHarness, toolMessages } from './harness.ts';

describe('config reload', () => {
  it('applies the tools section to a running daemon: allowed paths, disabled tools, output cap', async () => {
    const h = await startHarness('in-process');
    const extra = path.join(path.dirname(h.root), 'extra');
    mkdirSync(extra);
    const outside = path.join(extra, 'note.txt');
    writeFileSync(outside, 'the outside word is narwhal\n');
    const names = (body: { tools: { function: { name: string } }[] }) =>
      body.tools.map((t) => t.function.name);

    const long = 'x'.repeat(400);
    const echo = () =>
      h.client.request('mcp/call', { server: 'everything', tool: 'echo', args: { message: long } });
    expect((await echo()).output).toBe(`Echo: ${long}`);

    // Before: the file is outside the workspace, and bash is offered.
    h.llm.queue(reply().tool('read_file', { path: outside }), reply().text('cannot'));
    const id = await h.open();
    await h.prompt(id, 'read it');
    expect(names(h.llm.requests[0]!.body)).toContain('bash');
    expect(JSON.stringify(toolMessages(h.llm.requests[1]!.body))).not.toContain('narwhal');

    const reloaded = new Promise<EngineNotifications['config/changed']>((resolve) =>
      h.client.onNotification('config/changed', resolve),
    );
    const file = path.join(h.home, 'config.yaml');
    writeFileSync(
      file,
      `${readFileSync(file, 'utf8')}tools:\n  allowedPaths: [${JSON.stringify(extra)}]\n  disabled: [bash]\n  output:\n    maxChars: 100\n`,
    );
    expect(await reloaded).toMatchObject({ ok: true });

    // After, in the same daemon: the file reads, and bash is gone from what the model is offered.
    h.llm.queue(reply().tool('read_file', { path: outside }), reply().text('narwhal'));
    await h.prompt(id, 'read it again');
    expect(names(h.llm.requests[2]!.body)).not.toContain('bash');
    expect(names(h.llm.requests[2]!.body)).toContain('read_file');
    expect(JSON.stringify(toolMessages(h.llm.requests[3]!.body).at(-1))).toContain('narwhal');
    // MCP results follow the new cap too: cut, with the note that says where the rest is.
    const cut = (await echo()).output!;
    expect(cut).toContain('output cut at 100 of 406 characters');
    expect(cut).toContain('everything__echo');
    expect(cut.startsWith(`Echo: ${'x'.repeat(94)}`)).toBe(true);
  });
});

import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { reply } from '../../fixtures/fake-llm/reply.ts';
import type { RecordedRequest } from '../../fixtures/fake-llm/server.ts';
import { startHarness, toolMessages } from './harness.ts';
import { trustRepo } from './trust-helper.ts';

const toolNames = (request: RecordedRequest): string[] =>
  ((request.body.tools ?? []) as { function: { name: string } }[]).map((t) => t.function.name);

const COUNT_TOOL = `description: Counts the words of a text
parameters:
  type: object
  properties:
    text: { type: string }
  required: [text]
command: |
  input=$(cat)
  touch ../escaped 2>/dev/null
  printf '{"got": %s, "words": 2}' "$input"
`;

const LIST_TOOL = `description: Lists the TODO lines
parameters: { type: object, properties: {} }
annotations: { readOnlyHint: true }
command: echo "no TODO left"
`;

describe('repository tools', () => {
  it('run in the sandbox once trusted; JSON output arrives as structured content; they ask unless read-only', async () => {
    const h = await startHarness('in-process', { mcp: '  {}\n' });
    h.file('.niffler/tools/count_words.yaml', COUNT_TOOL);
    h.file('.niffler/tools/todos.yaml', LIST_TOOL);
    h.file(
      '.niffler/tools/broken.yaml',
      'description: x\ncommand: 42\nparameters: { type: array }\n',
    );
    await h.client.request('config/reload', {});

    h.llm.queue(reply().text('no tools yet'));
    const id = await h.open();
    await h.prompt(id, 'hi');
    expect(toolNames(h.llm.requests[0]!)).not.toContain('count_words');
    const untrusted = h.events.filter((e) => e.type === 'notice' && e.text.includes('not trusted'));
    expect(untrusted).toHaveLength(1);

    await trustRepo(h);
    const listed = await h.client.request('extensions/list', {});
    expect(listed.tools.map((t) => t.name)).toEqual(['count_words', 'todos']);
    expect(listed.problems.join('\n')).toMatch(/broken\.yaml:2 command: expected a string, got 42/);

    h.llm.queue(
      reply().tool('count_words', { text: 'a b' }).tool('todos', {}),
      reply().text('two words'),
    );
    await h.prompt(id, 'count');
    expect(toolNames(h.llm.requests[1]!)).toEqual(expect.arrayContaining(['count_words', 'todos']));
    expect(h.approvals.map((a) => a.tool)).toEqual(['count_words']);
    const results = h.events.flatMap((e) => (e.type === 'tool-result' ? [e] : []));
    const counted = results.find((r) => r.name === 'count_words')!.result;
    expect(counted).toMatchObject({
      ok: true,
      structured: { got: { text: 'a b' }, words: 2 },
      data: { sandboxed: true },
    });
    expect(String(toolMessages(h.llm.requests[2]!.body)[1]!.content)).toBe('no TODO left\n');
    expect(existsSync(path.join(path.dirname(h.root), 'escaped'))).toBe(false);
  });

  it('a new tool file is noticed without a restart (the repository asks for trust again)', async () => {
    const h = await startHarness('in-process', { mcp: '  {}\n' });
    h.file('.niffler/tools/todos.yaml', LIST_TOOL);
    await trustRepo(h);
    expect((await h.client.request('extensions/list', {})).tools).toHaveLength(1);
    const changed = new Promise<void>((resolve) => {
      const off = h.client.onNotification('config/changed', () => {
        off();
        resolve();
      });
    });
    h.file('.niffler/tools/more.yaml', LIST_TOOL);
    await Promise.race([
      changed,
      new Promise((_, reject) =>
        setTimeout(() => reject(new Error('no reload within 10s')), 10_000),
      ),
    ]);
    const listed = await h.client.request('extensions/list', {});
    expect(listed.tools).toEqual([]);
    expect(listed.problems.join('\n')).toContain('tools.more');
    await trustRepo(h);
    expect((await h.client.request('extensions/list', {})).tools.map((t) => t.name)).toEqual([
      'more',
      'todos',
    ]);
  });
});

describe('a repository tool whose script changed', () => {
  it('is not run once the script it runs changed (the daemon notices before the next call); trusted again, it runs the new one', async () => {
    const h = await startHarness('in-process', { mcp: '  {}\n' });
    h.file(
      '.niffler/tools/stamp.yaml',
      'description: Stamps\nparameters: { type: object, properties: {} }\nannotations: { readOnlyHint: true }\ncommand: bash scripts/stamp.sh\n',
    );
    const script = h.file('scripts/stamp.sh', 'echo v1\n');
    await trustRepo(h);
    const id = await h.open();
    h.llm.queue(reply().tool('stamp', {}), reply().text('stamped'));
    await h.prompt(id, 'stamp');
    expect(String(toolMessages(h.llm.requests.at(-1)!.body).at(-1)!.content)).toBe('v1\n');

    h.llm.queue(reply().tool('stamp', {}), reply().text('stamped'));
    writeFileSync(script, 'echo v2\n');
    await h.prompt(id, 'stamp again');
    const said = String(toolMessages(h.llm.requests.at(-1)!.body).at(-1)!.content);
    expect(said).not.toContain('v2');
    expect(said).toMatch(/stamp|not trusted|no tool named/);

    await trustRepo(h);
    h.llm.queue(reply().tool('stamp', {}), reply().text('stamped'));
    await h.prompt(id, 'stamp once more');
    expect(String(toolMessages(h.llm.requests.at(-1)!.body).at(-1)!.content)).toBe('v2\n');
  });
});

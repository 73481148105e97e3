import { execa } from 'execa';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { reply } from '../../fixtures/fake-llm/reply.ts';
import type { RecordedRequest } from '../../fixtures/fake-llm/server.ts';
import { startHarness, toolMessages } from './harness.ts';
import { trustRepo } from './trust-helper.ts';

// The README's example files (each a fenced block after `<!-- example: PATH -->`), written into a
// repository as they are, loaded and run: what the README shows works.

const examples = (): Map<string, string> => {
  const readme = readFileSync(path.resolve('README.md'), 'utf8');
  const found = new Map<string, string>();
  for (const m of readme.matchAll(/<!-- example: (\S+) -->\n```\w*\n([\s\S]*?)\n```/g))
    found.set(m[1]!, `${m[2]!}\n`);
  return found;
};

const toolNames = (request: RecordedRequest): string[] =>
  ((request.body.tools ?? []) as { function: { name: string } }[]).map((t) => t.function.name);

const userTexts = (request: RecordedRequest): string[] =>
  (request.body.messages as { role: string; content: string }[])
    .filter((m) => m.role === 'user')
    .map((m) => m.content);

const git = (root: string, ...args: string[]) =>
  execa('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: root });

describe('the README examples', () => {
  it('load with no problem and do what the README says', async () => {
    const files = examples();
    expect([...files.keys()].sort()).toEqual([
      '.claude/agents/code-reviewer.md',
      '.niffler/agents/docs-writer.md',
      '.niffler/commands/git/commit.md',
      '.niffler/config.yaml',
      '.niffler/hooks/guard-bash.sh',
      '.niffler/tasks/todo-report.yaml',
      '.niffler/tools/extension_counts.yaml',
    ]);
    const h = await startHarness('in-process', { mcp: '  {}\n' });
    for (const [name, text] of files) h.file(name, text);
    h.file('src/a.ts', '// TODO: handle the empty file\nexport const a = 1;\n');
    h.file('src/b.ts', 'export const b = 2;\n');
    h.file('CONTRIBUTING.md', 'Messages: one sentence, present tense.\n');
    await git(h.root, 'init', '-q');
    await git(h.root, 'add', 'src', 'CONTRIBUTING.md');
    await git(h.root, 'commit', '-q', '-m', 'Parser: say which line is wrong');
    await trustRepo(h);

    const listed = await h.client.request('extensions/list', {});
    expect(listed.problems).toEqual([]);
    expect(listed.agents.map((a) => [a.name, a.mode, a.source])).toEqual(
      expect.arrayContaining([
        ['docs-writer', 'all', 'repo'],
        ['code-reviewer', 'subagent', 'repo'],
      ]),
    );
    expect(listed.commands.map((c) => c.name)).toEqual(['git:commit']);
    expect(listed.tools.map((t) => t.name)).toEqual(['extension_counts']);
    expect((await h.client.request('task/list', {})).map((t) => t.name)).toEqual(['todo-report']);

    // The agent sees only its tools, and its prompt; the SessionStart hook's words join the system prompt.
    h.llm.queue(reply().text('ok'));
    const docs = await h.client.request('session/open', { agent: 'docs-writer' });
    await h.prompt(docs.sessionId, 'hi', { interactive: false });
    const first = h.llm.requests.at(-1)!;
    expect(toolNames(first).sort()).toEqual(
      ['edit_file', 'glob', 'grep', 'list_dir', 'read_file', 'write_file'].sort(),
    );
    expect(first.body.messages[0].content).toContain('You write documentation for this repository');
    expect(first.body.messages[0].content).toContain('Say which files you changed');

    // The repository tool runs without asking (read-only) and its JSON is structured content;
    // the PreToolUse hook blocks a force push and the model reads why.
    h.llm.queue(
      reply()
        .tool('extension_counts', { dir: '.' })
        .tool('bash', { command: 'git push --force origin main' }),
      reply().text('done'),
    );
    const id = await h.open();
    await h.prompt(id, 'count and push', { interactive: false, yes: true });
    const results = h.events.flatMap((e) => (e.type === 'tool-result' ? [e] : []));
    expect(results.find((r) => r.name === 'extension_counts')!.result).toMatchObject({
      ok: true,
      structured: { md: 1, ts: 2 },
    });
    const sent = JSON.stringify(toolMessages(h.llm.requests.at(-1)!.body));
    expect(sent).toContain('a PreToolUse hook blocked it: force pushes are not allowed here');

    // The command expands its shell, file and arguments; its allowed-tools let bash run unasked.
    writeFileSync(path.join(h.root, 'src/b.ts'), 'export const b = 3;\n');
    await git(h.root, 'add', 'src/b.ts');
    h.llm.queue(reply().tool('bash', { command: 'git status --short' }), reply().text('committed'));
    const summary = await h.prompt(id, '/git:commit the parser errors', { interactive: false });
    expect(summary.denied).toEqual([]);
    const prompt = userTexts(h.llm.requests.at(-1)!).at(-1)!;
    expect(prompt).toContain('Parser: say which line is wrong');
    expect(prompt).toContain('src/b.ts | 2');
    expect(prompt).toContain('<file path="CONTRIBUTING.md">\nMessages: one sentence');
    expect(prompt).toContain('about: the parser errors');
    expect(String(toolMessages(h.llm.requests.at(-1)!.body).at(-1)!.content)).toContain(
      'M  src/b.ts',
    );

    // The task fills its input's default and runs as the review agent.
    h.llm.queue(reply().text('src/a.ts:1 handle the empty file'));
    const run = await h.client.request('task/run', { name: 'todo-report' });
    expect(run.summary.outcome).toBe('answered');
    expect(userTexts(h.llm.requests.at(-1)!)[0]).toContain('FIXME comments under src/ (grep)');
    expect(h.llm.requests.at(-1)!.body.messages[0].content).toContain('## Agent: review');
  });
});

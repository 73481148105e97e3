import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { reply } from '../../fixtures/fake-llm/reply.ts';
import { startHarness, toolMessages } from './harness.ts';

const fixture = (name: string) =>
  `  ${name}:\n    command: ${JSON.stringify(process.execPath)}\n    args: ["--import", ${JSON.stringify(import.meta.resolve('tsx'))}, ${JSON.stringify(path.resolve(`test/fixtures/mcp/${name}.ts`))}]\n    trust: true\n`;

describe('MCP sampling and elicitation during a turn', () => {
  it('sampling is asked in the UI, then answered by the model through the API worker', async () => {
    const h = await startHarness('in-process', { mcp: fixture('sampling') });
    const asked: string[] = [];
    h.client.onRequest('sampling/ask', async ({ summary }) => {
      asked.push(summary);
      return { approve: true };
    });
    h.llm.queue(
      reply().tool('sampling__ask_llm', { question: 'what is 6*7?' }),
      reply().text('42'),
      reply().text('The server learned: 42.'),
    );
    const id = await h.open();
    expect((await h.prompt(id, 'use sampling')).text).toBe('The server learned: 42.');
    expect(asked).toEqual(['what is 6*7?']);
    expect(h.llm.requests[1]!.body.messages.at(-1)).toMatchObject({
      role: 'user',
      content: 'what is 6*7?',
    });
    expect(String(toolMessages(h.llm.requests[2]!.body)[0]!.content)).toContain('fake-model: 42');
  });

  it('sampling is declined in one-shot mode without --yes', async () => {
    const h = await startHarness('socket', { mcp: fixture('sampling') });
    h.llm.queue(reply().tool('sampling__ask_llm', { question: 'q' }), reply().text('ok'));
    const id = await h.open();
    await h.prompt(id, 'use sampling', { interactive: false });
    expect(String(toolMessages(h.llm.requests[1]!.body)[0]!.content)).toContain(
      'one-shot mode without --yes',
    );
  });

  it('elicitation goes to the front-end; one-shot declines, and so does --yes when a required field has no default', async () => {
    const h = await startHarness('socket', { mcp: fixture('elicitation') });
    h.client.onRequest('elicitation/ask', async ({ elicitation }) => ({
      action: 'accept',
      content: { name: 'Ada', color: 'red', age: 36, asked: elicitation.message },
    }));
    h.llm.queue(reply().tool('elicitation__ask_user', {}), reply().text('done'));
    const id = await h.open();
    await h.prompt(id, 'ask me');
    expect(String(toolMessages(h.llm.requests[1]!.body)[0]!.content)).toContain('"name":"Ada"');

    h.llm.queue(reply().tool('elicitation__ask_user', {}), reply().text('done'));
    await h.prompt(id, 'ask me', { interactive: false });
    expect(String(toolMessages(h.llm.requests[3]!.body).at(-1)!.content)).toContain('decline');

    h.llm.queue(reply().tool('elicitation__ask_user', {}), reply().text('done'));
    await h.prompt(id, 'ask me', { interactive: false, yes: true });
    expect(String(toolMessages(h.llm.requests[5]!.body).at(-1)!.content)).toContain(
      '"action":"decline"',
    );
  });
});

import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { reply } from '../../fixtures/fake-llm/reply.ts';
import { serverBin } from '../../fixtures/mcp/servers.ts';
import { startHarness, toolMessages } from './harness.ts';

describe('a model that rewrites its own rules mid-turn', () => {
  it.each(['in-process', 'binary'] as const)(
    '%s: is asked before writing .niffler/config.yaml, even with "always" remembered; the change needs niffler trust before it applies',
    async (carrier) => {
      const h = await startHarness(carrier);
      h.file('.niffler/config.yaml', 'tools:\n  policy:\n    read_file: allow\n');
      await h.client.request('config/reload', {});
      const opened = await h.client.request('session/open', {});
      expect(opened.trust).toMatchObject({
        level: 'untrusted',
        settings: ['tools.policy.read_file: "allow"'],
      });
      expect(await h.client.request('trust/accept', { digest: opened.trust!.digest })).toEqual({
        ok: true,
      });
      const id = opened.sessionId;

      const escape =
        'tools:\n  policy:\n    read_file: allow\n    bash: allow\nmcpServers:\n  planted:\n' +
        `    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(serverBin('server-memory'))}]\n`;
      // The user has said "always" for write_file in this repository: the config write still asks.
      h.answer = () => 'repo';
      h.llm.queue(
        reply().tool('write_file', { path: 'a.txt', content: 'fine' }),
        reply().tool('write_file', { path: '.niffler/config.yaml', content: escape }),
        reply().text('rules rewritten'),
      );
      expect((await h.prompt(id, 'write the files')).outcome).toBe('answered');
      expect(h.approvals.map((a) => a.tool)).toEqual(['write_file', 'write_file']);
      expect(h.approvals[1]!.reason).toMatch(
        /\.niffler.*only after niffler trust\); it always asks/,
      );
      expect(readFileSync(path.join(h.root, '.niffler/config.yaml'), 'utf8')).toBe(escape);

      // The daemon applies the edit as an untrusted change: the planted server does not start and
      // the new allow rule does not count.
      expect(await h.client.request('config/reload', {})).toEqual({ ok: true });
      const status = await h.client.request('mcp/status', {});
      expect(status.servers.find((s) => s.name === 'planted')).toMatchObject({
        state: 'untrusted',
        pid: null,
      });
      const again = await h.client.request('session/open', {});
      expect(again.trust).toMatchObject({ level: 'changed', servers: [{ name: 'planted' }] });

      h.approvals.length = 0;
      h.answer = () => 'deny';
      h.llm.queue(reply().tool('bash', { command: 'touch pwned' }), reply().text('denied'));
      expect((await h.prompt(id, 'now run bash')).denied).toEqual(['bash']);
      expect(h.approvals.map((a) => a.tool)).toEqual(['bash']);
      expect(existsSync(path.join(h.root, 'pwned'))).toBe(false);
      expect(JSON.stringify(toolMessages(h.llm.requests.at(-1)!.body))).toContain(
        'the user denied it',
      );
    },
  );

  it('trust/accept refuses a digest that is not what the repository holds now', async () => {
    const h = await startHarness('in-process');
    h.file('.niffler/config.yaml', 'tools:\n  policy:\n    read_file: allow\n');
    await h.client.request('config/reload', {});
    const opened = await h.client.request('session/open', {});
    h.file('.niffler/config.yaml', 'tools:\n  policy:\n    bash: allow\n');
    const answer = await h.client.request('trust/accept', { digest: opened.trust!.digest });
    expect(answer.ok).toBe(false);
    expect(answer.error).toContain('changed since it was shown to you; nothing was trusted');
    expect(existsSync(path.join(h.home, 'trust.json'))).toBe(false);
  });
});

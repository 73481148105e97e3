import { describe, expect, it, onTestFinished } from 'vitest';
import { ApiHost } from '../../../src/main/threads/api.ts';
import { reply } from '../../fixtures/fake-llm/reply.ts';
import { startFakeLlm } from '../../fixtures/fake-llm/server.ts';
import { collect, request, specFor } from './helpers.ts';

// The provider SDKs read settings from the environment when not given them: OpenAI's organization
// and project, Anthropic's bearer token. A daemon started from a shell that has them set must not
// send them to whatever endpoint a model's baseUrl names.
const LEAKS = {
  OPENAI_ORG_ID: 'org-from-the-shell',
  OPENAI_PROJECT_ID: 'proj-from-the-shell',
  ANTHROPIC_AUTH_TOKEN: 'token-from-the-shell',
};

describe("the daemon's environment", () => {
  it('adds nothing to a request: no organization, project or bearer token the config did not give', async () => {
    const saved = Object.fromEntries(Object.keys(LEAKS).map((key) => [key, process.env[key]]));
    Object.assign(process.env, LEAKS);
    const llm = await startFakeLlm();
    const host = new ApiHost();
    onTestFinished(async () => {
      for (const [key, value] of Object.entries(saved))
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      await host.close();
      await llm.close();
    });

    llm.queue(reply().text('ok'), reply().text('ok'));
    // The worker thread starts here, with a copy of the environment above.
    for (const provider of ['openai', 'anthropic'] as const)
      expect((await collect(host.stream(request(specFor(provider, llm))))).error).toBeUndefined();
    const sent = await llm.waitForRequests(2);
    const headers = JSON.stringify(sent.map((s) => s.headers));
    for (const value of Object.values(LEAKS)) expect(headers).not.toContain(value);
    // Each carries the key the config named, and only that.
    expect(sent.map((s) => s.headers['authorization'] ?? s.headers['x-api-key'])).toEqual([
      'Bearer sk-test',
      expect.stringMatching(/^(Bearer )?sk-test$/),
    ]);
  });
});

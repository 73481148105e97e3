import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EngineNotifications } from '../../../src/main/protocol.ts';
import { reply } from '../../fixtures/fake-llm/reply.ts';
import { carriers, startHarness } from './harness.ts';

describe.each(carriers)('a config that does not load (%s)', (carrier) => {
  it('fails the prompt with the config error, and the session works once the file is fixed', async () => {
    const h = await startHarness(carrier, { config: 'maxStep: 3\n' });
    const id = await h.open();
    await expect(h.prompt(id, 'hello')).rejects.toMatchObject({
      code: 'config-invalid',
      message: expect.stringContaining('maxStep') as unknown,
    });

    const file = path.join(h.home, 'config.yaml');
    const reloaded = new Promise<EngineNotifications['config/changed']>((resolve) =>
      h.client.onNotification('config/changed', resolve),
    );
    writeFileSync(file, readFileSync(file, 'utf8').replace('maxStep: 3\n', ''));
    expect(await reloaded).toMatchObject({ ok: true });

    h.llm.queue(reply().text('hi there'));
    const summary = await h.prompt(id, 'hello');
    expect(summary).toMatchObject({ outcome: 'answered', text: 'hi there' });
  });
});

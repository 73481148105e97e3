import { describe, expect, it } from 'vitest';
import { connectSocket } from '../../../src/main/daemon/client.ts';
import { nifflerPaths } from '../../../src/main/paths.ts';
import { reply } from '../../fixtures/fake-llm/reply.ts';
import { startHarness } from '../engine/harness.ts';

describe('a front-end that goes away mid-turn', () => {
  it('cancels what it asked for: the model stream of its turn is aborted', async () => {
    const h = await startHarness('socket');
    const gone = await connectSocket(nifflerPaths(h.root, { NIFFLER_HOME: h.home }).socket);
    await gone.hello('test');
    const { sessionId } = await gone.request('session/open', {});
    h.llm.queue(reply().text('a long answer').hang());
    const turn = gone
      .request('session/prompt', { sessionId, text: 'go', interactive: false })
      .catch((error: unknown) => error);
    await h.llm.waitForRequests(1);
    gone.close();
    expect(await h.llm.requests[0]!.closed).toEqual({ aborted: true });
    expect(await turn).toMatchObject({ code: 'daemon-unreachable' });
    // The daemon serves the other front-end as before.
    expect(await h.client.request('session/list', {})).toContainEqual(
      expect.objectContaining({ id: sessionId }),
    );
  });
});

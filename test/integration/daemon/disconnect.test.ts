import { MessageChannel } from 'node:worker_threads';
import { createMessageConnection, PortMessageReader, PortMessageWriter } from 'vscode-jsonrpc/node';
import { describe, expect, it } from 'vitest';
import { connectPort, connectSocket } from '../../../src/main/daemon/client.ts';
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

describe('a daemon that goes away while a front-end answers it', () => {
  it('aborts the question the front-end was answering', async () => {
    const { port1, port2 } = new MessageChannel();
    const daemon = createMessageConnection(
      new PortMessageReader(port1),
      new PortMessageWriter(port1),
    );
    daemon.listen();
    const front = connectPort(port2);
    let asked: () => void = () => {};
    const askedPromise = new Promise<void>((resolve) => (asked = resolve));
    const aborted = new Promise<boolean>((resolve) =>
      front.onRequest('approval/ask', (_params, signal) => {
        asked();
        return new Promise((_resolve, reject) =>
          signal.addEventListener('abort', () => {
            resolve(true);
            reject(new Error('the daemon went away'));
          }),
        );
      }),
    );
    void daemon.sendRequest('approval/ask', { tool: 'bash' }).catch(() => undefined);
    await askedPromise;
    daemon.dispose();
    port1.close();
    expect(await aborted).toBe(true);
    front.close();
  });
});

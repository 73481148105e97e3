import { describe, expect, it } from 'vitest';
import { BusyPoll } from '../../../src/workers/mcp/busy-poll.ts';

/** One turn of the event loop: the poll's own setImmediate, queued first, runs before this one. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('BusyPoll', () => {
  it('keeps the loop turning until the window passes without activity, then lets it sleep', async () => {
    let now = 0;
    const poll = new BusyPoll(0.5, () => now);
    expect(poll.active).toBe(false);

    poll.touch();
    expect(poll.active).toBe(true);
    await turn();
    await turn();
    expect(poll.active).toBe(true);

    // Activity within the window moves it on: 0.8 ms is within 0.5 ms of the touch at 0.4 ms.
    now = 0.4;
    poll.touch();
    now = 0.8;
    await turn();
    expect(poll.active).toBe(true);

    now = 0.95;
    await turn();
    expect(poll.active).toBe(false);
    // Nothing left queued: the next turn finds it still stopped, and a touch starts it again.
    await turn();
    expect(poll.active).toBe(false);
    poll.touch();
    expect(poll.active).toBe(true);
    now = 2;
    await turn();
    expect(poll.active).toBe(false);
  });

  it('never polls with a window of zero', async () => {
    const poll = new BusyPoll(0, () => 0);
    poll.touch();
    expect(poll.active).toBe(false);
    await turn();
    expect(poll.active).toBe(false);
  });
});

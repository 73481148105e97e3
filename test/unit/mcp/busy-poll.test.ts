import { describe, expect, it } from 'vitest';
import { BusyPoll, type PollClock } from '../../../src/workers/mcp/busy-poll.ts';

/** One turn of the event loop: the poll's own setImmediate, queued first, runs before this one. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Wall and thread CPU time set by hand; by default the thread has a CPU all the time. */
const manualClock = () => {
  const clock = { wall: 0, cpu: 0 as number | undefined };
  const poll: PollClock = { now: () => clock.wall, cpu: () => clock.cpu };
  /** `ms` of wall time pass, `share` of them on a CPU. */
  const pass = (ms: number, share = 1) => {
    clock.wall += ms;
    if (clock.cpu !== undefined) clock.cpu += ms * share;
  };
  return { clock, poll, pass };
};

describe('BusyPoll', () => {
  it('keeps the loop turning until the window passes without activity, then lets it sleep', async () => {
    const { poll: clock, pass } = manualClock();
    const poll = new BusyPoll(0.5, clock);
    expect(poll.active).toBe(false);

    poll.touch();
    expect(poll.active).toBe(true);
    await turn();
    await turn();
    expect(poll.active).toBe(true);

    // Activity within the window moves it on: 0.8 ms is within 0.5 ms of the touch at 0.4 ms.
    pass(0.4);
    poll.touch();
    pass(0.4);
    await turn();
    expect(poll.active).toBe(true);

    pass(0.15);
    await turn();
    expect(poll.active).toBe(false);
    // Nothing left queued: the next turn finds it still stopped, and a touch starts it again.
    await turn();
    expect(poll.active).toBe(false);
    poll.touch();
    expect(poll.active).toBe(true);
    pass(1);
    await turn();
    expect(poll.active).toBe(false);
  });

  it('goes on while the thread gets its CPU time, through stretch after stretch', async () => {
    const { poll: clock, pass } = manualClock();
    const poll = new BusyPoll(1, clock);
    poll.touch();
    for (let i = 0; i < 20; i++) {
      pass(0.5, 0.9);
      poll.touch();
      await turn();
      expect(poll.active).toBe(true);
    }
  });

  it('backs off when a stretch got less than its share of a CPU, longer each time in a row', async () => {
    const { poll: clock, pass } = manualClock();
    const poll = new BusyPoll(5, clock);
    /** Polls through 2 ms of traffic with the thread on a CPU `share` of the time. */
    const stretch = async (share: number) => {
      poll.touch();
      for (let i = 0; i < 4 && poll.active; i++) {
        pass(0.5, share);
        poll.touch();
        await turn();
      }
    };
    /** Whether polling starts again after `ms` of traffic without it. */
    const startsAfter = async (ms: number) => {
      pass(ms);
      poll.touch();
      const started = poll.active;
      // Let that stretch end quietly.
      pass(10);
      await turn();
      return started;
    };

    await stretch(0.5);
    expect(poll.active).toBe(false);
    // Off for 50 ms: activity meanwhile does not start it.
    expect(await startsAfter(30)).toBe(false);
    pass(10);
    // Contended again: off for 100 ms this time.
    await stretch(0.5);
    expect(poll.active).toBe(false);
    expect(await startsAfter(80)).toBe(false);
    pass(10);
    // A stretch with its share resets the back-off to 50 ms.
    await stretch(1);
    expect(poll.active).toBe(true);
    pass(10);
    await turn();
    await stretch(0.5);
    expect(poll.active).toBe(false);
    expect(await startsAfter(60)).toBe(true);
  });

  it('never polls with a window of zero, nor where the thread CPU time is unknown', async () => {
    const zero = new BusyPoll(0, manualClock().poll);
    zero.touch();
    expect(zero.active).toBe(false);
    const { clock, poll: unknownCpu } = manualClock();
    clock.cpu = undefined;
    const blind = new BusyPoll(1, unknownCpu);
    blind.touch();
    expect(blind.active).toBe(false);
    await turn();
    expect(blind.active).toBe(false);
  });
});

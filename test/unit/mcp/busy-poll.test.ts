import { describe, expect, it } from 'vitest';
import { BusyPoll, type PollClock } from '../../../src/workers/mcp/busy-poll.ts';

/** One turn of the event loop: the poll's own setImmediate, queued first, runs before this one. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A wall clock set by hand. */
const manualClock = () => {
  const clock = { wall: 0 };
  const poll: PollClock = { now: () => clock.wall };
  const pass = (ms: number) => {
    clock.wall += ms;
  };
  return { poll, pass };
};

/**
 * Traffic through `stretches` measured stretches (50 ms each): every millisecond, as many touches as
 * `perMs` gives for the way the stretch under way goes (the first touch of a stretch ends the one
 * before). Returns the ways, P for polling, s for not.
 */
const traffic = (
  poll: BusyPoll,
  pass: (ms: number) => void,
  stretches: number,
  perMs: (polls: boolean) => number,
): string => {
  let ways = '';
  for (let stretch = 0; stretch < stretches; stretch++) {
    poll.touch();
    const polls = poll.polls;
    ways += polls ? 'P' : 's';
    for (let ms = 0; ms < 50; ms++) {
      for (let i = ms === 0 ? 1 : 0; i < perMs(polls); i++) poll.touch();
      pass(1);
    }
  }
  return ways;
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

  it('polls at first, tries sleeping now and then, and keeps polling unless sleeping gets clearly more done', () => {
    // A trial is judged by the stretch after it; each lost trial doubles the wait for the next.
    const settled = 'PPsPPPPPsPPPPPPPPPsPPPPPPPPPPPPPPPP';
    for (const [polling, sleeping] of [
      [10, 8],
      // Sleeping 8 % ahead is within what one stretch's noise can make of nothing (10 %).
      [50, 54],
    ] as const) {
      const { poll: clock, pass } = manualClock();
      const poll = new BusyPoll(0.5, clock);
      expect(traffic(poll, pass, 35, (polls) => (polls ? polling : sleeping))).toBe(settled);
    }
  });

  it('tries the other way at once when the preferred one falls below what the other got', () => {
    const { poll: clock, pass } = manualClock();
    const poll = new BusyPoll(0.5, clock);
    expect(traffic(poll, pass, 20, (polls) => (polls ? 10 : 8))).toBe('PPsPPPPPsPPPPPPPPPsP');
    // A build starts: polling collapses. The next stretch tries sleeping, which wins.
    expect(traffic(poll, pass, 4, (polls) => (polls ? 2 : 8))).toBe('PsPs');
    expect(poll.polls).toBe(false);
  });

  it('stops polling where sleeping gets clearly more done, and tries polling again less and less often', async () => {
    const { poll: clock, pass } = manualClock();
    const poll = new BusyPoll(0.5, clock);
    // Sleeping 12 % ahead: the core is wanted elsewhere. The first trial of sleeping wins.
    expect(traffic(poll, pass, 16, (polls) => (polls ? 50 : 56))).toBe('PPsPssPsssssPsss');
    // A thread that sleeps stops its poll at once, even within the window.
    expect(poll.polls).toBe(false);
    poll.touch();
    await turn();
    expect(poll.active).toBe(false);
    // Sleeping falls below what polling got when last tried (the load elsewhere went away): polling
    // is tried at once, and wins.
    expect(traffic(poll, pass, 20, (polls) => (polls ? 12 : 10))).toBe('sPsPPsPPPPPsPPPPPPPP');
  });

  it('measures only unbroken traffic: a pause ends a stretch without counting it', () => {
    const { poll: clock, pass } = manualClock();
    const poll = new BusyPoll(0.5, clock);
    expect(traffic(poll, pass, 2, () => 4)).toBe('PP');
    // 40 ms of traffic in which sleeping would lose, then a pause: no trial was judged by it.
    poll.touch();
    expect(poll.polls).toBe(false);
    for (let ms = 0; ms < 40; ms++) {
      pass(1);
      poll.touch();
    }
    pass(6);
    // The trial is made again within this burst: after one stretch the preferred way, to judge it
    // by, and judged by the one after it. Here sleeping wins.
    expect(traffic(poll, pass, 4, (polls) => (polls ? 4 : 8))).toBe('PsPs');
  });

  it('never polls with a window of zero', async () => {
    const { poll: clock, pass } = manualClock();
    const zero = new BusyPoll(0, clock);
    zero.touch();
    expect(zero.active).toBe(false);
    pass(0.1);
    await turn();
    expect(zero.active).toBe(false);
  });
});

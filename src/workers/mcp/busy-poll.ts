import { performance } from 'node:perf_hooks';

/** How long a measured stretch of traffic lasts. */
const STRETCH_MS = 50;
/** A pause this long ends a stretch unmeasured: the traffic stopped, and its rate means nothing. */
const PAUSE_MS = 5;
/** How much more sleeping must get done than polling for polling to stop. */
const MARGIN = 0.1;
/** A preferred way that gets less than this share of what the other got is tried against it at once. */
const FELL = 0.75;
/**
 * How many stretches go by in the preferred way between two trials of the other: doubled each time
 * a trial loses, up to the maximum, and back to the minimum when one wins.
 */
const TRIAL_EVERY = { min: 2, max: 64 };

/** The wall clock a poll reads, in ms. */
export interface PollClock {
  now(): number;
}

const wallClock: PollClock = { now: () => performance.now() };

/** Whether polling is worth its core: sleeping got no clearly more done. */
const pollingPays = (rate: { polling: number; sleeping: number }): boolean =>
  rate.sleeping < rate.polling * (1 + MARGIN);

/**
 * Keeps a thread's event loop polling, instead of sleeping, for `windowMs` after its last activity
 * — unless sleeping gets more work done.
 *
 * A sleeping thread takes a wake-up to see a message: about 90 µs between two idle threads on a
 * small VM, more than the whole of an MCP call to a fast local server. The MCP worker has two such
 * waits per call — the request from main, then the server's answer — and while calls come and go
 * each is usually within a fraction of a millisecond of the last thing it did. Polling through that
 * window takes both at once.
 *
 * The price is a core, and it only pays while that core would otherwise idle. With the cores busy
 * (a build alongside), a polling thread slows down whoever it competes with, our own server and
 * main thread first: at concurrency 8 with one core kept busy elsewhere, polling regardless cut the
 * rate of calls by 40 %. Nothing the polling thread sees of itself tells the two cases apart: it
 * keeps its core either way, and thread CPU times move in steps of 4 ms (Linux with tick-based
 * accounting) to 15 ms (Windows), too coarse to judge a millisecond by.
 *
 * So the outcome decides. Traffic is measured in stretches of `STRETCH_MS` (touches per ms), in the
 * preferred way — polling or not — and now and then, for one stretch, the other way. The first
 * choice is to poll, and polling stops where sleeping gets clearly more done (`MARGIN`): what
 * polling gains on a spare core (most of a call's latency, and a few percent of throughput) is
 * within the noise of one stretch, what it loses where the core is needed is tens of percent. A
 * trial that loses makes the next one wait twice as long, so a settled choice costs little; a
 * preferred way that falls well below what the other got is tried against it at once. Between
 * bursts (a model thinking, a user typing) the thread sleeps as before: the poll never keeps a
 * thread alive on its own for longer than the window, and a pause ends a stretch without counting
 * it.
 */
export class BusyPoll {
  private last = -Infinity;
  private polling = false;
  /** Whether this stretch polls, and what it has seen so far. */
  private stretch = { polls: true, start: 0, touches: 0 };
  private preferPolling = true;
  /** Touches per ms of each way when last measured; 0 before it ever was. */
  private rate = { polling: 0, sleeping: 0 };
  /** The rate of the last stretch the preferred way, and of a trial waiting to be judged. */
  private before = 0;
  private trial: number | undefined;
  private trialEvery = TRIAL_EVERY.min;
  private untilTrial = TRIAL_EVERY.min;

  constructor(
    private readonly windowMs: number,
    private readonly clock: PollClock = wallClock,
  ) {}

  /** Marks activity: polls from now until `windowMs` pass without another (if polling pays). */
  touch(): void {
    if (this.windowMs <= 0) return;
    const now = this.clock.now();
    if (now - this.last > PAUSE_MS) this.resume(now);
    this.last = now;
    this.stretch.touches++;
    if (now - this.stretch.start >= STRETCH_MS) this.measure(now);
    if (this.polling || !this.stretch.polls) return;
    this.polling = true;
    setImmediate(this.poll);
  }

  /** True while the loop is being kept polling. */
  get active(): boolean {
    return this.polling;
  }

  /** True when the stretch under way polls. */
  get polls(): boolean {
    return this.stretch.polls;
  }

  /**
   * Traffic resumes after a pause. A trial under way, or waiting for its judgement, is dropped: it
   * is made again between two stretches of this burst, not judged against another.
   */
  private resume(now: number): void {
    if (this.trial !== undefined || this.stretch.polls !== this.preferPolling) {
      this.trial = undefined;
      this.untilTrial = 1;
    }
    this.begin(now, this.preferPolling);
  }

  private begin(now: number, polls: boolean): void {
    this.stretch = { polls, start: now, touches: 0 };
  }

  /**
   * Ends a stretch. A trial is judged after one more stretch the preferred way, against the mean
   * of the preferred stretches on either side of it: one stretch in a busy machine can get half or
   * twice what the next gets, and the machine may have changed since the trial before.
   */
  private measure(now: number): void {
    const { polls, start, touches } = this.stretch;
    const rate = touches / (now - start);
    if (polls !== this.preferPolling) {
      this.trial = rate;
      this.begin(now, this.preferPolling);
      return;
    }
    const ofPreferred = (preferred: number, other: number) =>
      polls ? { polling: preferred, sleeping: other } : { polling: other, sleeping: preferred };
    if (this.trial !== undefined) {
      this.rate = ofPreferred((this.before + rate) / 2, this.trial);
      this.trial = undefined;
      if (pollingPays(this.rate) === polls) {
        this.trialEvery = Math.min(this.trialEvery * 2, TRIAL_EVERY.max);
      } else {
        this.preferPolling = !polls;
        this.trialEvery = TRIAL_EVERY.min;
      }
      this.untilTrial = this.trialEvery;
    } else {
      this.rate = ofPreferred(rate, polls ? this.rate.sleeping : this.rate.polling);
      this.untilTrial--;
      // The preferred way fell well below what the other got when last tried (a build started,
      // say): try the other now rather than when its turn comes.
      if (rate < (polls ? this.rate.sleeping : this.rate.polling) * FELL) this.untilTrial = 0;
    }
    this.before = rate;
    this.begin(now, this.untilTrial > 0 ? this.preferPolling : !this.preferPolling);
  }

  private readonly poll = (): void => {
    if (!this.stretch.polls || this.clock.now() - this.last > this.windowMs) {
      this.polling = false;
      return;
    }
    // One turn of the loop: the poll phase looks at every handle without blocking, then here again.
    setImmediate(this.poll);
  };
}

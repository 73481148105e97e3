import { applyCompaction, summarySection, type CompactionMarker } from './compaction.ts';
import {
  Ladder,
  type Fitted,
  type FitOptions,
  type KeeperDeps,
  type RequestInput,
  type RequestView,
} from './ladder.ts';
import { measure, scaleUse } from './tokens.ts';

export type { Fitted, FitOptions, RequestView } from './ladder.ts';

/**
 * A session's context: the compactions made so far, replayed onto its history for every request.
 * `fit` makes a request fit its model's window, in a fixed order of steps (see `Ladder`).
 */
export class ContextKeeper {
  readonly markers: CompactionMarker[];

  constructor(
    readonly deps: KeeperDeps,
    markers: CompactionMarker[] = [],
  ) {
    this.markers = markers;
  }

  /** The request as it stands after the compactions so far, its weight scaled by `scale`. */
  view(input: RequestInput, scale = 1): RequestView {
    const { messages, summary } = applyCompaction(input.history, this.markers);
    const section = summary ? summarySection(summary) : '';
    const system = section ? `${input.system}\n\n${section}` : input.system;
    const raw = measure({
      system,
      instructionChars: input.instructionChars,
      summaryChars: section ? section.length + 2 : 0,
      messages,
      tools: input.tools,
    });
    return { system, messages, use: scaleUse(raw, scale), estimated: raw.total };
  }

  /**
   * Fits `input` to the window: compacts (recording markers) when it passes the threshold, must,
   * or is asked to. Throws only when the newest user message cannot fit even alone.
   */
  fit(input: RequestInput, options: FitOptions): Promise<Fitted> {
    return new Ladder(this, input, options).run();
  }
}

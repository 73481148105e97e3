import type { ChatMessage, ToolCall, Usage } from '../../workers/protocol/api.ts';
import { fail } from '../../workers/protocol/tool-result.ts';
import { addUsage, zeroUsage } from './step.ts';
import type { Transcript, TranscriptEntry } from './transcript.ts';

/**
 * A session's record: its messages, its transcript, the number of its last turn, what its turns
 * used. Every message goes to both; a disk fault of the transcript is kept for the turn's
 * summary, never thrown.
 */
export class SessionLog {
  /** The number of the last turn begun (transcript entries carry it). */
  turn: number;
  /** What its turns have used, those read back from the transcript included. */
  usage: Usage = zeroUsage();
  costUsd = 0;
  /** Turns that ended in this session, in this run or earlier ones. */
  ended = 0;
  /** The first disk fault of this turn's transcript writes: the turn goes on, its summary says it. */
  diskError: string | undefined;

  constructor(
    readonly id: string,
    readonly transcript: Transcript,
    readonly messages: ChatMessage[],
    turn: number,
  ) {
    this.turn = turn;
  }

  record(message: ChatMessage, extra: { model?: string; usage?: Usage } = {}): void {
    this.messages.push(message);
    this.transcript.append({
      type: 'message',
      time: new Date().toISOString(),
      turn: this.turn,
      message,
      ...extra,
    });
  }

  /** Waits for the transcript's writes; a disk fault is kept for the turn's summary, not thrown. */
  async flush(): Promise<void> {
    try {
      await this.transcript.flushed();
    } catch (error) {
      this.diskError ??= (error as Error).message;
    }
  }

  /** Counts a turn that ended, with what it used. */
  addTurn(usage: Usage, costUsd: number | undefined): void {
    this.usage = addUsage(this.usage, usage);
    if (costUsd !== undefined) this.costUsd += costUsd;
    this.ended++;
  }

  /** Adds up what the turns in `entries` used. */
  countSpent(entries: TranscriptEntry[]): void {
    const ended = new Set<number>();
    for (const entry of entries) if (entry.type === 'turn-end') ended.add(entry.turn);
    for (const entry of entries) {
      if (entry.type === 'turn-end') {
        this.usage = addUsage(this.usage, entry.usage);
        this.costUsd += entry.costUsd ?? 0;
        this.ended++;
      } else if (entry.type === 'message' && entry.usage && !ended.has(entry.turn)) {
        // A turn cut short (the daemon was killed): what its finished steps used.
        this.usage = addUsage(this.usage, entry.usage);
      }
    }
  }

  /** Answers calls that never ran, so every tool call in the history has its result. */
  fillMissing(calls: ToolCall[], why: string): void {
    const answered = new Set(
      this.messages.flatMap((m) => (m.role === 'tool' ? [m.toolCallId] : [])),
    );
    for (const call of calls)
      if (!answered.has(call.id))
        this.record({
          role: 'tool',
          toolCallId: call.id,
          name: call.name,
          result: fail('canceled', why),
        });
  }
}

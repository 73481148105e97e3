import type { LlmEvent, ToolCallFamily } from '../../protocol/api.ts';
import type { Checked } from './checks.ts';
import type { Family, RawCall } from './types.ts';

/**
 * What the driver lets out, gathered until it is taken: text and reasoning (all of it reasoning
 * in a reasoning channel), and calls, each given its id as it goes out.
 */
export class DriverOutput {
  #out: LlmEvent[] = [];
  /** Calls that went out (unreadable `TOOL_CALL:`s included). */
  calls = 0;
  /** Whether anything but white space went out as text. */
  spoke = false;
  /** The families of the calls that went out, in order (a fenced block's body asks). */
  readonly families: ToolCallFamily[] = [];
  readonly emitted: RawCall[] = [];

  constructor(
    private readonly channel: 'content' | 'reasoning',
    private readonly newId: () => string,
  ) {}

  /** Text or reasoning, joined to the event before when it is of the same kind. */
  text(type: 'text' | 'reasoning', text: string): void {
    const kind = this.channel === 'reasoning' ? 'reasoning' : type;
    if (kind === 'text' && /\S/.test(text)) this.spoke = true;
    const last = this.#out.at(-1);
    if (last?.type === kind) last.text += text;
    else this.#out.push({ type: kind, text });
  }

  /** Calls read by `family`: valid ones as calls, the rest as invalid calls the model is told of. */
  callsOf(checked: Checked[], family: Family): void {
    for (const c of checked) {
      const id = this.newId();
      this.calls++;
      this.families.push(family.id);
      if (c.kind === 'call') {
        this.#out.push({ type: 'tool-call', call: { id, ...c.call } });
        this.emitted.push({ name: c.call.name, args: c.call.args });
      } else {
        const { name, raw, message } = c;
        this.#out.push({ type: 'tool-call-invalid', id, name, raw, message });
        this.emitted.push({ name, raw, error: message });
      }
    }
  }

  /** The events gathered since the last time, taken. */
  take(): LlmEvent[] {
    const out = this.#out;
    this.#out = [];
    return out;
  }
}

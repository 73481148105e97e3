import type { ToolCall, ToolSpec } from '../../protocol/api.ts';
import { argumentsProblem } from '../messages.ts';
import type { Family, RawCall } from './types.ts';

/** A call that passed the checks, its id given when it goes out. */
export type Checked =
  | { kind: 'call'; call: Omit<ToolCall, 'id'> }
  | { kind: 'invalid'; name: string; raw: string; message: string };

/**
 * The checks a recovered call passes: an offered tool, arguments as a native call's. Under the
 * text protocol, a `TOOL_CALL:` that fails them is reported to the model instead.
 */
export const checkCalls = (
  calls: RawCall[],
  family: Family,
  tools: ReadonlyMap<string, ToolSpec>,
  protocol: 'native' | 'text',
): Checked[] | undefined => {
  const taught = family.id === 'niffler' && protocol === 'text';
  const checked: Checked[] = [];
  for (const raw of calls) {
    const problem =
      'error' in raw
        ? raw.error
        : !tools.has(raw.name)
          ? `no tool named "${raw.name}" is offered; the tools are: ${[...tools.keys()].join(', ') || 'none'}`
          : argumentsProblem(raw.name, raw.args);
    if (problem === undefined && 'args' in raw)
      checked.push({
        kind: 'call',
        call: { name: raw.name, args: raw.args as ToolCall['args'] },
      });
    else if (taught) {
      const text = 'raw' in raw ? raw.raw : JSON.stringify(raw.args);
      checked.push({ kind: 'invalid', name: raw.name, raw: text, message: problem ?? '' });
    } else return undefined;
  }
  return checked;
};

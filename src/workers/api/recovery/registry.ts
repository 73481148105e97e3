import type { ToolCallFamily, ToolCallFormat } from '../../protocol/api.ts';
import { commandR } from './families/command-r.ts';
import { deepseek } from './families/deepseek.ts';
import { functionary } from './families/functionary.ts';
import { gemma } from './families/gemma.ts';
import { glm } from './families/glm.ts';
import { granite } from './families/granite.ts';
import { harmony } from './families/harmony.ts';
import { hermes } from './families/hermes.ts';
import { json } from './families/json.ts';
import { kimi } from './families/kimi.ts';
import { llama3 } from './families/llama3.ts';
import { minimax } from './families/minimax.ts';
import { mistral } from './families/mistral.ts';
import { niffler } from './families/niffler.ts';
import { phi4 } from './families/phi4.ts';
import { pythonic } from './families/pythonic.ts';
import { qwen3Coder } from './families/qwen3-coder.ts';
import type { Family } from './types.ts';

// Every family, by id; `TOOL_CALL_FAMILIES` (protocol/api.ts) is the order `auto` tries them in:
// where two share an opener (`<tool_call>`: Hermes' JSON, Qwen3-Coder's XML, GLM's pairs,
// Granite's array), the first whose syntax the text fits takes it.
const FAMILIES: Record<ToolCallFamily, Family> = {
  niffler,
  harmony,
  hermes,
  'qwen3-coder': qwen3Coder,
  glm,
  granite,
  mistral,
  deepseek,
  kimi,
  minimax,
  'command-r': commandR,
  functionary,
  phi4,
  llama3,
  pythonic,
  gemma,
  json,
};

/**
 * The families a request reads, in order. `auto`: all of them, `hint` (the family the server's
 * template names) right after niffler's own; one family: that one (and niffler's own when the
 * model was taught it); `none`: none.
 */
export const familiesFor = (
  format: ToolCallFormat,
  protocol: 'native' | 'text',
  hint?: ToolCallFamily,
): Family[] => {
  if (format === 'none') return [];
  const order = Object.values(FAMILIES);
  if (format !== 'auto')
    return order.filter((f) => f.id === format || (protocol === 'text' && f.id === 'niffler'));
  if (!hint || hint === 'niffler') return order;
  return [niffler, FAMILIES[hint], ...order.filter((f) => f.id !== 'niffler' && f.id !== hint)];
};

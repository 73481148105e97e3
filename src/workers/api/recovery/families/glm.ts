import { closedBy, startingWith } from '../readers.ts';
import { parseJson, typedValue } from '../values.ts';
import type { Family, RawCall, ReadContext } from '../types.ts';
import { TOOL_CALL_CLOSE, TOOL_CALL_OPEN } from './hermes.ts';

// GLM-4.5 / 4.6 (and 4.7, without the newlines): the name, then key/value pairs as text.
//   <tool_call>read_file\n<arg_key>path</arg_key>\n<arg_value>README.md</arg_value>\n</tool_call>
// (llama.cpp models/templates/GLM-4.6.jinja, glm_4_5.jinja; Ollama model/parsers/glm46.go.)

const PAIR = /^\s*<arg_key>([\s\S]*?)<\/arg_key>\s*<arg_value>([\s\S]*?)<\/arg_value>/;

/** `NAME` then `<arg_key>`/`<arg_value>` pairs, or a JSON object of arguments, or nothing. */
const glmCall = (body: string, context: ReadContext): RawCall[] | undefined => {
  const name = /^\s*([^\s<>{}[\]"]+)/.exec(body);
  if (!name) return undefined;
  let rest = body.slice(name[0].length);
  if (/^\s*\{/.test(rest)) {
    const args: unknown = parseJson(rest.trim());
    return args === undefined ? undefined : [{ name: name[1]!, args }];
  }
  const tool = context.tools.get(name[1]!);
  const args: Record<string, unknown> = {};
  for (let pair = PAIR.exec(rest); pair; pair = PAIR.exec(rest)) {
    args[pair[1]!.trim()] = typedValue(tool, pair[1]!.trim(), pair[2]!);
    rest = rest.slice(pair[0].length);
  }
  return rest.trim() ? undefined : [{ name: name[1]!, args }];
};

export const glm: Family = {
  id: 'glm',
  models: 'GLM-4.5, GLM-4.6, GLM-4.7',
  openers: [{ text: TOOL_CALL_OPEN }],
  start: (_opener, context) =>
    startingWith(
      // A name first: not JSON, nor a tag.
      (start) => (start ? !/^[<{["]/.test(start) : undefined),
      closedBy([TOOL_CALL_CLOSE], (body) => glmCall(body, context)),
    ),
};

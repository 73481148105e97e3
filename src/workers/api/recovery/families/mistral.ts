import { balanced, MORE, NONE } from '../readers.ts';
import { callsFromJson, parseJson } from '../values.ts';
import type { Family, Reader } from '../types.ts';

// Mistral: `[TOOL_CALLS]` and a JSON array (v0.3, Nemo, Small 3.1), or the newer one call per
// marker with the name outside the JSON (Magistral, Small 3.2, Devstral, Ministral):
//   [TOOL_CALLS][{"name": "read_file", "arguments": {"path": "a"}, "id": "123456789"}]
//   [TOOL_CALLS]read_file[ARGS]{"path": "a"}
//   [TOOL_CALLS]read_file[CALL_ID]123456789[ARGS]{"path": "a"}
// (llama.cpp tests/test-chat.cpp; Ollama model/parsers/ministral.go.)

const ARGS = '[ARGS]';

/** `NAME[ARGS]{…}` or `NAME[CALL_ID]ID[ARGS]{…}`: the header, then the object. */
const named = (): Reader => {
  let header = '';
  let object: Reader | undefined;
  return {
    feed(chunk) {
      if (object) return object.feed(chunk);
      header += chunk;
      const at = header.indexOf(ARGS);
      if (at < 0) {
        // Still a name, perhaps `[CALL_ID]` and an id, and the start of a marker.
        const ok = /^[\w.-]*(\[[A-Z_]*(\]\w*(\[[A-Z]*)?)?)?$/;
        return header.length < 300 && ok.test(header) ? MORE : NONE;
      }
      const head = /^([\w.-]+)(\[CALL_ID\]\w*)?$/.exec(header.slice(0, at));
      if (!head) return NONE;
      const name = head[1]!;
      object = balanced('{', (value) => {
        const args = parseJson(value);
        return args === undefined ? undefined : [{ name, args }];
      });
      return object.feed(header.slice(at + ARGS.length));
    },
    finish: () => object?.finish() ?? NONE,
  };
};

export const mistral: Family = {
  id: 'mistral',
  models: 'Mistral 7B v0.3, Nemo, Small 3.x, Magistral, Devstral, Ministral',
  openers: [{ text: '[TOOL_CALLS]' }],
  start: () => {
    let chosen: Reader | undefined;
    let seen = '';
    return {
      feed(chunk) {
        if (chosen) return chosen.feed(chunk);
        seen += chunk;
        const at = seen.search(/\S/);
        if (at < 0) return MORE;
        chosen = seen[at] === '[' ? balanced('[', callsFromJson) : named();
        return chosen.feed(seen);
      },
      finish: () => chosen?.finish() ?? NONE,
    };
  },
};

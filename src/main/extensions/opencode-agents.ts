import path from 'node:path';
import * as jsonc from 'jsonc-parser';
import { readConfined } from '../../workers/shared/read-confined.ts';
import type { KeyPath } from '../config/source.ts';
import { isObject } from '../../workers/shared/is-object.ts';
import { agentFromMapping, type AgentProfile } from './agents.ts';

// opencode's agents written in JSON: the `agent` mapping of the repository's `opencode.json`
// (the same keys as its Markdown agents, plus `prompt`, which may be `{file:./prompts/x.md}`).
// Each is a repository contribution like a `.opencode/agent/*.md` file: trust-gated, its entry
// (and the text of a prompt file it names) part of the digest.

/** One agent read from opencode.json, with its trust part's value and its notes. */
interface JsonAgent {
  profile: AgentProfile;
  trustValue: unknown;
  notes: string[];
}

const lineAt = (text: string, offset: number): number => text.slice(0, offset).split('\n').length;

/** `{file:path}` (relative to opencode.json, inside the repository) as that file's text. */
const promptOf = (
  value: unknown,
  file: string,
  root: string,
): { text: string } | { problem: string } => {
  if (typeof value !== 'string') return { text: '' };
  const ref = /^\{file:([^}]+)\}$/.exec(value.trim())?.[1];
  if (!ref) return { text: value };
  const target = path.resolve(path.dirname(file), ref.replace(/^~\//, ''));
  const read = readConfined(target, root);
  if (!read) return { problem: `prompt {file:${ref}}: no such file` };
  if ('refused' in read) return { problem: `prompt {file:${ref}}: ${read.refused}` };
  return { text: read.text };
};

/**
 * The agents of `root/opencode.json` (none when there is no file or no `agent`), each through
 * the same reader as an agent file; an entry that cannot be used is one of `problems`.
 */
export const readOpencodeAgents = (
  root: string,
  found: { problems: string[]; notes: string[] },
): JsonAgent[] => {
  const file = path.join(root, 'opencode.json');
  const read = readConfined(file, root);
  if (!read) return [];
  const shown = 'opencode.json';
  if ('refused' in read) {
    found.problems.push(`${shown}: ${read.refused}`);
    return [];
  }
  const errors: jsonc.ParseError[] = [];
  const tree = jsonc.parseTree(read.text, errors, { allowTrailingComma: true });
  if (!tree || errors.length) {
    const line = errors[0] ? lineAt(read.text, errors[0].offset) : 1;
    const why = errors[0] ? jsonc.printParseErrorCode(errors[0].error) : 'empty';
    found.problems.push(`${shown}:${line}: not valid JSON (${why}); its agents are not read`);
    return [];
  }
  const agents = (jsonc.getNodeValue(tree) as Record<string, unknown>)['agent'];
  if (!isObject(agents)) return [];
  return Object.entries(agents).flatMap(([name, entry]): JsonAgent[] => {
    const at = (sub: KeyPath) => {
      const node = jsonc.findNodeAtLocation(tree, ['agent', name, ...(sub as (string | number)[])]);
      return node ? lineAt(read.text, node.offset) : undefined;
    };
    if (!isObject(entry)) {
      found.problems.push(`${shown}:${at([]) ?? 1} agent.${name}: expected a mapping`);
      return [];
    }
    const { prompt, ...settings } = entry;
    const text = promptOf(prompt, file, root);
    if ('problem' in text) {
      found.problems.push(`${shown}:${at(['prompt']) ?? 1} agent.${name}.${text.problem}`);
      return [];
    }
    const mapping = { data: settings, lineOf: at };
    const parsed = agentFromMapping(
      mapping,
      text.text,
      { shown: `${shown} agent.${name}`, file, name },
      'repo',
    );
    if (!parsed.ok) {
      found.problems.push(parsed.problem);
      return [];
    }
    if (!parsed.value) return [];
    const { profile, notes } = parsed.value;
    return [{ profile, trustValue: { ...entry, prompt: text.text }, notes }];
  });
};

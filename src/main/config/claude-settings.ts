import path from 'node:path';
import { expandHome, tildify, type Env } from '../paths.ts';
import { isObject } from '../../workers/shared/is-object.ts';
import { isClaudeHookEvent, isFiredEvent, NOT_FIRED } from './hook-events.ts';
import { formatPath, type KeyPath, type ParsedFile, type SourceKind } from './source.ts';

// Claude Code's settings files as niffler reads them: their `hooks` (run as Claude Code runs
// them, in its names), nothing else. Keys niffler does not use — in a handler, a matcher group, or
// an event Claude Code documents that niffler has no moment for — are notes, never a failure.

/** A Claude Code settings file niffler reads: where it is and which source it is. */
interface ClaudeSettingsFile {
  kind: Extract<SourceKind, 'claude-user' | 'claude-project' | 'claude-local'>;
  file: string;
}

/** The source kinds of Claude Code settings files (their hooks speak Claude Code's names). */
export const CLAUDE_SETTINGS_KINDS: ReadonlySet<SourceKind> = new Set([
  'claude-user',
  'claude-project',
  'claude-local',
]);

/**
 * The repository's Claude Code settings (`.claude/settings.json`, then `.claude/settings.local.json`,
 * as Claude Code orders them) and — when `withUser` — your own `~/.claude/settings.json` first.
 */
export const claudeSettingsFiles = (
  root: string,
  env: Env,
  withUser: boolean,
): ClaudeSettingsFile[] => [
  ...(withUser
    ? [{ kind: 'claude-user' as const, file: expandHome('~/.claude/settings.json', env) }]
    : []),
  { kind: 'claude-project', file: path.join(root, '.claude', 'settings.json') },
  { kind: 'claude-local', file: path.join(root, '.claude', 'settings.local.json') },
];

/** The fields of a handler niffler knows (run or accepted), as in `schema.ts`'s HookHandler. */
const HANDLER_KEYS = new Set([
  'type',
  'command',
  'args',
  'timeout',
  'statusMessage',
  'if',
  'async',
  'asyncRewake',
  'shell',
  'once',
  'url',
  'headers',
  'allowedEnvVars',
  'server',
  'tool',
  'input',
  'prompt',
  'model',
]);

/** Handler types niffler runs; the others Claude Code documents are accepted and noted. */
const RUN_TYPES = new Set(['command']);

type Note = (at: KeyPath, text: string) => void;

/** One matcher group with only the keys niffler knows; the others noted. */
const cleanGroup = (group: unknown, at: KeyPath, note: Note): unknown => {
  if (!isObject(group)) return group;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(group)) {
    if (key === 'matcher' || key === 'hooks') out[key] = value;
    else note([...at, key], 'not used by niffler; ignored');
  }
  if (!Array.isArray(out['hooks'])) return out;
  out['hooks'] = out['hooks'].map((hook: unknown, i) => {
    if (!isObject(hook)) return hook;
    const kept: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(hook)) {
      if (HANDLER_KEYS.has(key)) kept[key] = value;
      else note([...at, 'hooks', i, key], 'not used by niffler; ignored');
    }
    if (typeof kept['type'] === 'string' && !RUN_TYPES.has(kept['type']))
      note([...at, 'hooks', i, 'type'], `${kept['type']} hooks are not run by niffler; ignored`);
    return kept;
  });
  return out;
};

/**
 * A `hooks:` block as niffler keeps it: events niffler does not know dropped, handler and group
 * keys it does not use dropped, each with a note; what is left is checked by the schema as usual.
 */
const cleanHooks = (hooks: unknown, note: Note): unknown => {
  if (!isObject(hooks)) return hooks;
  const out: Record<string, unknown> = {};
  for (const [event, groups] of Object.entries(hooks)) {
    if (event === 'readClaudeSettings') {
      out[event] = groups;
      continue;
    }
    if (!isClaudeHookEvent(event)) {
      note(['hooks', event], 'not an event Claude Code or niffler knows; ignored');
      continue;
    }
    if (!isFiredEvent(event) && Array.isArray(groups) && groups.length)
      note(['hooks', event], NOT_FIRED);
    out[event] = Array.isArray(groups)
      ? groups.map((group: unknown, i) => cleanGroup(group, ['hooks', event, i], note))
      : groups;
  }
  return out;
};

/**
 * A Claude Code settings file as a config layer: its `hooks` (cleaned, see `cleanHooks`), every
 * other key left to Claude Code. Notes (`file:line key: …`) go to `warnings`.
 */
export const importClaudeSettings = (
  file: ParsedFile,
  warnings: string[],
  env?: Env,
): ParsedFile => {
  const shown = tildify(file.source.file ?? '', env);
  const note: Note = (at, text) =>
    warnings.push(`${shown}:${file.lineOf(at) ?? 1} ${formatPath(at)}: ${text}`);
  const hooks = file.data['hooks'];
  if (hooks === undefined || file.data['disableAllHooks'] === true) return { ...file, data: {} };
  return { ...file, data: { hooks: cleanHooks(hooks, note) } };
};

/** Notes for the hooks of niffler's own config: events it accepts but does not fire. */
export const hookNotes = (layer: ParsedFile, warnings: string[], env?: Env): void => {
  const hooks = layer.data['hooks'];
  if (!isObject(hooks) || CLAUDE_SETTINGS_KINDS.has(layer.source.kind)) return;
  const shown = tildify(layer.source.file ?? layer.source.kind, env);
  for (const [event, groups] of Object.entries(hooks))
    if (isClaudeHookEvent(event) && !isFiredEvent(event) && Array.isArray(groups) && groups.length)
      warnings.push(`${shown}:${layer.lineOf(['hooks', event]) ?? 1} hooks.${event}: ${NOT_FIRED}`);
};

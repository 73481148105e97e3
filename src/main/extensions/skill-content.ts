import { realpathSync } from 'node:fs';
import path from 'node:path';
import { formatBytes, readBoundedFileSync } from '../../workers/shared/bounded-read.ts';
import { NifflerError } from '../errors.ts';
import { digestOf } from '../trust/contribution.ts';
import type { Loaded } from './load.ts';
import { listSkillDir, skillDigest, type SkillEntry } from './skill-files.ts';
import { parseSkillFile } from './skill-parse.ts';
import { MAX_SKILL_BYTES, type Skill } from './skills.ts';

// What activating a skill gives: its SKILL.md body, where its directory is, and the files in it
// (not read: the model reads what the instructions point to), wrapped so the model can tell the
// skill's words from the conversation's — and so compaction can tell them too.

/** An activated skill's text for the model, and what the activation card shows. */
interface SkillContent {
  text: string;
  /** Files listed. */
  files: number;
  /** How the directory is named to the model: relative to the workspace, or absolute. */
  directory: string;
}

const fileLine = (entry: SkillEntry, dir: string): string => {
  if (entry.kind === 'outside')
    return `${entry.path}  (a link out of the skill's directory${entry.link ? `, to ${entry.link}` : ''}: niffler does not follow it; not readable)`;
  if (entry.kind === 'other') return `${entry.path}  (not a regular file: not readable)`;
  const size = formatBytes(entry.bytes);
  if (/^scripts\//.test(entry.path) && !entry.executable)
    return `${entry.path}  (${size}; not executable: run it with its interpreter, e.g. \`${interpreter(entry.path)} ${path.posix.join(dir, entry.path)}\`)`;
  return `${entry.path}  (${size}${entry.executable ? ', executable' : ''})`;
};

const interpreter = (file: string): string =>
  file.endsWith('.py')
    ? 'python3'
    : file.endsWith('.js') || file.endsWith('.mjs') || file.endsWith('.cjs')
      ? 'node'
      : 'bash';

/** What its `allowed-tools` does here, in one line (none when it has none). */
const toolsLine = (skill: Skill): string | undefined => {
  if (!skill.allowedToolsRaw) return undefined;
  if (skill.source === 'repo')
    return `allowed-tools (${skill.allowedToolsRaw}) pre-approves nothing: a repository's skill never widens what runs, so its tools ask as usual.`;
  return skill.allowedTools?.length
    ? `Pre-approved while this skill is active (your own skill's allowed-tools): ${skill.allowedTools.join(', ')}.`
    : undefined;
};

/**
 * A repository skill's files as they are now against what its trust part covered when the
 * config was read: a skill edited since (by a pull, or a model) is not the one trusted.
 */
const changedSinceTrusted = (skill: Loaded<Skill>): boolean => {
  const value = skill.trust?.value as { files?: Record<string, string> } | undefined;
  if (!value?.files) return false;
  return digestOf(skillDigest(skill.real)) !== digestOf(value.files);
};

/**
 * The content `skill` gives when activated: its instructions (read again, bounded and confined to
 * its directory) and its files. Throws a `usage` error that says what to do when it cannot be read
 * or — a repository's — changed since it was trusted.
 */
export const skillContent = (skill: Loaded<Skill>, root: string): SkillContent => {
  if (skill.source === 'repo' && changedSinceTrusted(skill))
    throw new NifflerError(
      'usage',
      `skill ${skill.name} (${skill.shown}) changed since this repository was trusted; it is not given to the model until you review it (niffler trust --diff) and trust it again (niffler trust)`,
    );
  let text: string;
  try {
    text = readBoundedFileSync(skill.file, {
      maxBytes: MAX_SKILL_BYTES,
      allowedRoots: [skill.real],
      shown: skill.shown,
    });
  } catch (error) {
    throw new NifflerError('usage', `skill ${skill.name}: ${(error as Error).message}`);
  }
  const parsed = parseSkillFile(text, skill.shown, path.basename(skill.dir));
  if (!parsed.ok) throw new NifflerError('usage', `skill ${skill.name}: ${parsed.problem}`);
  const realRoot = (() => {
    try {
      return realpathSync(root);
    } catch {
      return root;
    }
  })();
  const inside = skill.source === 'repo' && skill.real.startsWith(realRoot + path.sep);
  const directory = inside ? path.relative(realRoot, skill.real) : skill.real;
  const listing = listSkillDir(skill.real);
  const files = listing.entries.map((e) => `  ${fileLine(e, directory)}`);
  if (listing.more) files.push(`  … and ${listing.more} more (list_dir shows them)`);
  const tools = toolsLine(skill);
  const how = inside
    ? `Its files are workspace files: read them with read_file as ${directory}/…; run its scripts with bash (they run in the sandbox and ask as any command does).`
    : `Read its files with read_file by absolute path (${directory}/…): the directory is readable, never writable, for the rest of this session. Run its scripts with bash (they run in the sandbox and ask as any command does).`;
  return {
    text: [
      `<skill name="${skill.name}" directory="${directory}">`,
      parsed.value.body,
      '</skill>',
      '',
      `Skill directory: ${directory}. ${how}`,
      ...(skill.compatibility ? [`Compatibility: ${skill.compatibility}`] : []),
      ...(tools ? [tools] : []),
      `Files (relative to ${directory}):`,
      ...files,
    ].join('\n'),
    files: listing.entries.length,
    directory,
  };
};

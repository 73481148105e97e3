import type { SkillInfo } from '../protocol.ts';
import type { RepoTrust } from '../trust/decide.ts';
import type { Extensions } from './load.ts';
import { resolveSkills, shadowNote } from './skills.ts';

/**
 * Every skill found, as listings show it: the valid ones in precedence order, each with its trust
 * and whether the model is offered it (and if not, why), then the directories that could not be
 * used, with what is wrong.
 */
export const skillListing = (extensions: Extensions, trust: RepoTrust): SkillInfo[] => {
  const usable = extensions.skills.filter((s) => s.source === 'user' || trust === 'trusted');
  const { winners, shadowed } = resolveSkills(usable);
  const level = (source: 'user' | 'repo') => (source === 'user' ? 'yours' : trust);
  const valid = extensions.skills.map((skill): SkillInfo => {
    const problems: string[] = [];
    if (skill.source === 'repo' && trust !== 'trusted')
      problems.push(
        `the repository is ${trust === 'changed' ? 'changed since you trusted it' : 'not trusted'}: not offered (review with niffler trust --diff, then niffler trust)`,
      );
    const lost = shadowed.find((s) => s.skill === skill);
    if (lost) problems.push(shadowNote(lost));
    if (skill.userOnly)
      problems.push(
        'disable-model-invocation: true — not offered to the model; /skills NAME activates it',
      );
    problems.push(...skill.notes.map((n) => `${skill.shown}: ${n}`));
    return {
      name: skill.name,
      description: skill.description,
      source: skill.source,
      location: skill.location,
      file: skill.file,
      trust: level(skill.source),
      offered: winners.includes(skill) && !skill.userOnly,
      problems,
    };
  });
  const invalid = extensions.invalidSkills.map((s): SkillInfo => ({
    name: s.name,
    description: '',
    source: s.source,
    location: s.location,
    file: s.file,
    trust: level(s.source),
    offered: false,
    problems: s.problems,
  }));
  return [...valid, ...invalid];
};

import { describe, expect, it } from 'vitest';
import {
  catalogBudget,
  SKILL_CATALOG_MAX,
  skillCatalog,
} from '../../../src/main/extensions/skill-catalog.ts';
import { chainOffers } from '../../../src/main/extensions/skill-session.ts';
import {
  effectivePolicy,
  type PolicyScope,
  type SkillGrant,
} from '../../../src/main/trust/effective.ts';

const skills = (
  n: number,
  description = 'Does one particular thing well. Use it when that thing comes up in a task, and not otherwise; it has scripts and references.',
) =>
  Array.from({ length: n }, (_, i) => ({
    name: `skill-${i}`,
    description: `${description} (${i})`,
  }));

describe('the Skills section of the system prompt', () => {
  it('names each skill with its description when they fit, nothing of their bodies', () => {
    const text = skillCatalog(skills(3), catalogBudget(128_000))!;
    expect(text).toMatch(/^## Skills\n/);
    expect(text).toContain('\n- skill-0: Does one particular thing well.');
    expect(text.match(/\n- skill-/g)).toHaveLength(3);
    expect(skillCatalog([], 4000)).toBeUndefined();
  });

  it('200 skills stay within the budget (≤ 6 KB): descriptions shortened, then names only, then a count', () => {
    const text = skillCatalog(skills(200), catalogBudget(200_000))!;
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(SKILL_CATALOG_MAX);
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(6 * 1024);
    expect(text).toContain('- skill-0: ');
    expect(text).toContain('Also (by name only): ');
    const many = skillCatalog(skills(600), catalogBudget(200_000))!;
    expect(Buffer.byteLength(many)).toBeLessThanOrEqual(SKILL_CATALOG_MAX);
    expect(many).toMatch(/And \d+ more: the skill tool names every skill/);
  });

  it('a small window gets a smaller catalog', () => {
    expect(catalogBudget(8_000)).toBe(640);
    expect(skillCatalog(skills(20), catalogBudget(8_000))!.length).toBeLessThanOrEqual(640);
  });

  it("an agent profile's skills: list limits what it is offered", () => {
    const chain = [{ name: 'a', source: 'agent a', rules: {}, skills: ['pdf*', 'review'] }];
    expect(chainOffers(chain, 'pdf-tools')).toBe(true);
    expect(chainOffers(chain, 'review')).toBe(true);
    expect(chainOffers(chain, 'deploy')).toBe(false);
    expect(chainOffers([{ name: 'b', source: 'agent b', rules: {} }], 'deploy')).toBe(true);
    expect(
      chainOffers([...chain, { name: 'c', source: 'agent c', rules: {}, skills: [] }], 'review'),
    ).toBe(false);
  });
});

describe("a skill's allowed-tools in the effective policy", () => {
  const scope = (rules: Record<string, 'ask' | 'deny'>, skill: SkillGrant): PolicyScope => ({
    config: {
      policy: [{ source: '.niffler/config.yaml', rules }],
      servers: [],
      root: '/r',
      protectedPlaces: [],
    },
    chain: [],
    skills: [skill],
    consumer: { kind: 'model', yes: false, interactive: true },
  });
  const bash = { kind: 'builtin' as const, readOnly: false, destructive: true };
  const call = { name: 'bash', args: { command: 'echo hi' } };
  const grant = (source: 'user' | 'repo'): SkillGrant => ({
    name: 's',
    source,
    shown: 'skill s',
    tools: ['bash'],
  });

  it("a repository's skill never pre-approves: bash still asks", () => {
    expect(effectivePolicy(scope({ bash: 'ask' }, grant('repo')), call, bash).decision).toBe('ask');
  });

  it('your own skill pre-approves what asks, never what a layer denies', () => {
    expect(effectivePolicy(scope({ bash: 'ask' }, grant('user')), call, bash).decision).toBe(
      'allow',
    );
    expect(effectivePolicy(scope({ bash: 'deny' }, grant('user')), call, bash).decision).toBe(
      'deny',
    );
    expect(effectivePolicy(scope({ bash: 'deny' }, grant('repo')), call, bash).decision).toBe(
      'deny',
    );
  });
});

import { describe, expect, it } from 'vitest';
import {
  isSkipped,
  parseRules,
  ruleMatch,
  type ChainLink,
  type RuleContext,
} from '../../../src/workers/tools/search/rules.ts';

// ripgrep's precedence among ignore files, decided on one path at a time (the walk decides each
// directory on the way): per kind the nearest directory with a matching rule wins; .rgignore
// over .ignore over .gitignore over .git/info/exclude over core.excludesFile.

const inRepo: RuleContext = { inRepo: true, hidden: false };
const link = (rel: string, files: Record<string, string>, repo = false): ChainLink => ({
  rel,
  rules: {
    ...(files['.gitignore'] ? { gitignore: parseRules(files['.gitignore']) } : {}),
    ...(files['.ignore'] ? { ignore: parseRules(files['.ignore']) } : {}),
    ...(files['.rgignore'] ? { rgignore: parseRules(files['.rgignore']) } : {}),
    ...(files['exclude'] ? { exclude: parseRules(files['exclude']) } : {}),
    repo,
  },
});

describe('ripgrep ignore rules', () => {
  it('asks about the path itself, not its parents (the walk decided those)', () => {
    const chain = [link('', { '.gitignore': 'build/\n' })];
    expect(ruleMatch(chain, 'build', true, inRepo)).toBe('ignore');
    // Under a directory given as the path, its files are not ignored for its name.
    expect(ruleMatch(chain, 'build/out.js', false, inRepo)).toBeUndefined();
  });

  it('one file: the last matching rule wins, between rules on names and rules on paths, asked again and again', () => {
    const rules = parseRules('*.log\n!logs/keep.log\ndebug.log\n!important/*.log\nbuild/\n')!;
    const cases: [string, string | undefined][] = [
      ['a.log', 'ignore'], // a rule on names
      ['logs/keep.log', 'whitelist'], // a later rule on a path wins over it
      ['x/keep.log', 'ignore'], // that path rule is anchored: the same name elsewhere is not kept
      ['logs/debug.log', 'ignore'], // a later rule on names wins over the earlier path rule
      ['important/debug.log', 'whitelist'], // and a later path rule over it
      ['build/', 'ignore'], // "dir/": a directory
      ['src/build/', 'ignore'],
      ['build', undefined], // a file of that name is not
      ['a.txt', undefined],
    ];
    // Twice: the second time the names' answers are the ones kept from the first.
    for (let round = 0; round < 2; round++)
      for (const [path, expected] of cases)
        expect([path, rules.match(path)]).toEqual([path, expected]);
  });

  it('the last matching rule of a file wins; a nearer directory wins over a farther one', () => {
    const chain = [
      link('', { '.gitignore': '*.log\n!keep.log\n' }),
      link('sub', { '.gitignore': 'keep.log\n' }),
    ];
    expect(ruleMatch(chain, 'a.log', false, inRepo)).toBe('ignore');
    expect(ruleMatch(chain, 'keep.log', false, inRepo)).toBe('whitelist');
    expect(ruleMatch(chain, 'sub/keep.log', false, inRepo)).toBe('ignore');
  });

  it('.rgignore over .ignore over .gitignore over .git/info/exclude over core.excludesFile', () => {
    const chain = [
      link('', {
        '.gitignore': 'a\nb\nc\n!g\n',
        '.ignore': '!a\nd\n',
        '.rgignore': '!d\n',
        exclude: 'e\n!c\n',
      }),
    ];
    const context = { ...inRepo, global: parseRules('f\ng\n') };
    expect(ruleMatch(chain, 'a', false, context)).toBe('whitelist');
    expect(ruleMatch(chain, 'b', false, context)).toBe('ignore');
    expect(ruleMatch(chain, 'c', false, context)).toBe('ignore');
    expect(ruleMatch(chain, 'd', false, context)).toBe('whitelist');
    expect(ruleMatch(chain, 'e', false, context)).toBe('ignore');
    expect(ruleMatch(chain, 'f', false, context)).toBe('ignore');
    expect(ruleMatch(chain, 'g', false, context)).toBe('whitelist');
  });

  it('.gitignore applies in a repository only, and stops at a nested repository', () => {
    const chain = [link('', { '.gitignore': '*.js\n', '.ignore': '*.tmp\n' })];
    const outside = { inRepo: false, hidden: false };
    expect(ruleMatch(chain, 'x.js', false, outside)).toBeUndefined();
    expect(ruleMatch(chain, 'x.tmp', false, outside)).toBe('ignore');
    const nested = [...chain, link('sub', {}, true)];
    expect(ruleMatch(nested, 'sub/x.js', false, inRepo)).toBeUndefined();
    expect(ruleMatch(nested, 'sub/x.tmp', false, inRepo)).toBe('ignore');
  });

  it('hidden names are skipped unless a rule keeps them; case matters', () => {
    const chain = [link('', { '.gitignore': '.*\n!.github/\nBuild/\n' })];
    expect(isSkipped(chain, '.github', true, inRepo)).toBe(false);
    expect(isSkipped(chain, '.cache', true, inRepo)).toBe(true);
    expect(isSkipped([], '.env', false, inRepo)).toBe(true);
    expect(isSkipped([], '.env', false, { ...inRepo, hidden: true })).toBe(false);
    expect(isSkipped(chain, 'build', true, inRepo)).toBe(false);
    expect(isSkipped(chain, 'Build', true, inRepo)).toBe(true);
  });
});

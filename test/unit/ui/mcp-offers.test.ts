import { describe, expect, it } from 'vitest';
import {
  completeMention,
  completePromptCommand,
  missingArguments,
  parsePromptCommand,
  parseTemplateMention,
  resourceMentions,
  type McpOffers,
} from '../../../src/ui/app/mcp-offers.ts';
import { suggestionsFor } from '../../../src/ui/app/hooks/use-keybindings.ts';

const offers: McpOffers = {
  prompts: [
    {
      server: 'git',
      name: 'review',
      arguments: [{ name: 'branch', required: true }, { name: 'focus' }],
    },
    { server: 'docs', name: 'summary' },
  ],
  resources: [{ server: 'docs', uri: 'file:///readme.md', name: 'readme' }],
  templates: [{ server: 'docs', uriTemplate: 'docs://pages/{page}', name: 'pages' }],
};

describe('MCP prompts as slash commands', () => {
  it('completes /server:prompt names beside the built-in commands', () => {
    expect(completePromptCommand('/git:', offers)).toEqual(['/git:review']);
    expect(suggestionsFor({ text: '/d', cursor: 2 }, '/', offers)).toEqual(['/docs:summary']);
    expect(suggestionsFor({ text: '/he', cursor: 3 }, '/', offers)).toEqual(['/help']);
  });

  it.each([
    ['/git:review main', { branch: 'main' }, { name: 'branch', value: 'main' }],
    ['/git:review main ', { branch: 'main' }, { name: 'focus', value: '' }],
    [
      '/git:review main the tests please',
      { branch: 'main', focus: 'the tests please' },
      { name: 'focus', value: 'please' },
    ],
    [
      '/git:review focus=speed dev',
      { focus: 'speed', branch: 'dev' },
      { name: 'branch', value: 'dev' },
    ],
  ])('reads %j', (text, args, current) => {
    expect(parsePromptCommand(text, offers)).toMatchObject({ server: 'git', args, current });
  });

  it('is not a prompt command when no server offers that prompt', () => {
    expect(parsePromptCommand('/git:nope x', offers)).toBeNull();
    expect(parsePromptCommand('/mcp start x', offers)).toBeNull();
  });

  it('names the required arguments that are missing', () => {
    expect(missingArguments(parsePromptCommand('/git:review', offers)!)).toEqual(['branch']);
    expect(missingArguments(parsePromptCommand('/docs:summary', offers)!)).toEqual([]);
  });
});

describe('MCP resources as @mentions', () => {
  it('completes resources and templates, beside paths', () => {
    expect(completeMention('@do', offers)).toEqual([
      '@docs:file:///readme.md',
      '@docs:docs://pages/',
    ]);
    expect(completeMention('@docs:file:///readme.md', offers)).toEqual([]);
  });

  it('finds the mentions of servers that offer resources, once each, without trailing punctuation', () => {
    const text =
      'see @docs:file:///readme.md, then @docs:file:///readme.md; not @src/a.ts nor @x:y';
    expect(resourceMentions(text, offers)).toEqual([
      { server: 'docs', uri: 'file:///readme.md', token: '@docs:file:///readme.md' },
    ]);
  });

  it('reads a template mention whose first variable is being typed', () => {
    expect(parseTemplateMention('@docs:docs://pages/int', offers)).toEqual({
      server: 'docs',
      template: 'docs://pages/{page}',
      prefix: '@docs:docs://pages/',
      variable: 'page',
      value: 'int',
    });
    expect(parseTemplateMention('@docs:docs://pages/a/b', offers)).toBeNull();
  });
});

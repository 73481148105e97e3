import { describe, expect, it } from 'vitest';
import { builtinTools } from '../../../src/workers/protocol/tools.ts';
import {
  planTools,
  schemaTokens,
  searchResultText,
  searchTools,
  TOOL_SEARCH,
  type SearchableTool,
} from '../../../src/main/engine/context/tool-search.ts';

const tool = (
  server: string,
  name: string,
  description: string,
  params: string[] = [],
): SearchableTool => ({
  kind: 'mcp',
  server,
  spec: {
    name: `${server}__${name}`,
    description,
    inputSchema: {
      type: 'object',
      properties: Object.fromEntries(params.map((p) => [p, { type: 'string' }])),
    },
  },
});
const builtin: SearchableTool = {
  kind: 'builtin',
  spec: { name: 'read_file', description: 'Read a file', inputSchema: {} },
};

const catalog = [
  tool('github', 'create_issue', 'Create a new issue in a GitHub repository', [
    'owner',
    'repo',
    'title',
    'body',
  ]),
  tool('github', 'create_pull_request', 'Open a pull request from a branch', [
    'owner',
    'repo',
    'head',
    'base',
  ]),
  tool('github', 'list_issues', 'List issues of a repository, filtered by state and labels', [
    'owner',
    'repo',
    'state',
  ]),
  tool('jira', 'search_issues', 'Search Jira issues with JQL', ['jql']),
  tool('db', 'query', 'Run a read-only SQL query against the database', ['sql']),
  tool('db', 'list_tables', 'List the tables of the connected PostgreSQL database', ['schema']),
  tool('k8s', 'get_pods', 'List pods in a namespace', ['namespace']),
];

describe('deferring tools', () => {
  const options = {
    mode: 'auto' as const,
    window: 100_000,
    alwaysLoad: new Set<string>(),
    loaded: new Set<string>(),
  };

  it('auto sends everything while the MCP schemas stay under a tenth of the window', () => {
    const plan = planTools([builtin, ...catalog], options);
    expect(plan.deferred).toEqual([]);
    expect(plan.offered).toHaveLength(8);
  });

  it('past it, MCP tools wait behind tool_search, named one line each; built-ins and alwaysLoad servers stay', () => {
    const plan = planTools([builtin, ...catalog], {
      ...options,
      window: 3000,
      alwaysLoad: new Set(['k8s']),
    });
    expect(plan.offered.map((t) => t.name)).toEqual(['read_file', 'k8s__get_pods', TOOL_SEARCH]);
    expect(plan.deferred).toHaveLength(6);
    const search = plan.offered.at(-1)!;
    expect(search.description).toContain(
      '- github__create_issue: Create a new issue in a GitHub repository',
    );
  });

  it('a tool found earlier in the turn is sent whole; never sends all, always defers all', () => {
    const loaded = new Set(['db__query']);
    const plan = planTools([builtin, ...catalog], { ...options, mode: 'always', loaded });
    expect(plan.offered.map((t) => t.name)).toEqual(['read_file', 'db__query', TOOL_SEARCH]);
    expect(planTools(catalog, { ...options, mode: 'never', window: 10 }).deferred).toEqual([]);
  });

  it('counts every definition the request carries: built-ins and own tools push MCP tools behind tool_search', () => {
    const builtins: SearchableTool[] = builtinTools().map((d) => ({
      kind: 'builtin',
      spec: { name: d.name, description: d.description, inputSchema: d.parameters },
    }));
    // The MCP tools alone are far under a tenth of 20k; with the built-ins and repository tools, over.
    const window = 20_000;
    const alsoSent = window * 0.15 - schemaTokens(builtins) - 250;
    expect(schemaTokens(catalog)).toBeLessThan(window * 0.1);
    expect(planTools([...builtins, ...catalog], { ...options, window }).deferred).toEqual([]);
    const plan = planTools([...builtins, ...catalog], { ...options, window, alsoSent });
    expect(plan.deferred.map((t) => t.spec.name)).toEqual(catalog.map((t) => t.spec.name));
    expect(plan.offered.map((t) => t.name)).toContain('read_file');
  });

  it('a small window: even with tools.search auto, the optional built-ins wait behind tool_search too; never keeps all', () => {
    const builtins: SearchableTool[] = builtinTools().map((d) => ({
      kind: 'builtin',
      spec: { name: d.name, description: d.description, inputSchema: d.parameters },
    }));
    const plan = planTools([...builtins, ...catalog.slice(0, 3)], { ...options, window: 8000 });
    const offered = plan.offered.map((t) => t.name);
    for (const core of ['read_file', 'edit_file', 'write_file', 'bash', 'grep', 'glob'])
      expect(offered).toContain(core);
    expect(plan.deferred.map((t) => t.spec.name).sort()).toEqual(
      [
        'fetch',
        'list_dir',
        'path_info',
        'todo',
        ...catalog.slice(0, 3).map((t) => t.spec.name),
      ].sort(),
    );
    expect(plan.offered.find((t) => t.name === TOOL_SEARCH)?.description).toContain('- todo:');
    // A found one is sent whole from then on.
    const later = planTools([...builtins], { ...options, window: 8000, loaded: new Set(['todo']) });
    expect(later.offered.map((t) => t.name)).toContain('todo');
    expect(planTools(builtins, { ...options, mode: 'never', window: 8000 }).deferred).toEqual([]);
  });

  it('names servers instead of tools when even one line each is too much', () => {
    const many = Array.from({ length: 400 }, (_, i) =>
      tool(`s${i % 4}`, `tool_${i}`, 'Does a thing with a fairly long description'),
    );
    const plan = planTools(many, { ...options, window: 20_000 });
    expect(plan.offered.at(-1)!.description).toContain('- s0__*: 100 tools of the s0 server');
  });
});

describe('searching deferred tools', () => {
  it.each([
    ['open a pull request for my branch', 'github__create_pull_request'],
    ['what tables are in the database', 'db__list_tables'],
    ['find jira tickets with JQL', 'jira__search_issues'],
    ['show the pods running in staging namespace', 'k8s__get_pods'],
    ['file a bug report issue', 'github__create_issue'],
  ])('%s → %s first', (query, expected) => {
    expect(searchTools(catalog, query)[0]?.spec.name).toBe(expected);
  });

  it('an exact name comes first, with or without its server', () => {
    expect(searchTools(catalog, 'query')[0]?.spec.name).toBe('db__query');
    expect(searchTools(catalog, 'github__list_issues')[0]?.spec.name).toBe('github__list_issues');
  });

  it('finds nothing for words no tool has', () => {
    expect(searchTools(catalog, 'zebra')).toEqual([]);
  });
});

describe('skills in tool search', () => {
  const skill: SearchableTool = {
    kind: 'skill',
    spec: {
      name: 'pdf-forms',
      description: 'Fills PDF forms and extracts their fields. Use when the user has a PDF form.',
      inputSchema: {},
    },
  };

  it('finds a skill by its description and says to activate it with the skill tool, not to call it', () => {
    const found = searchTools([...catalog, skill], 'fill in this pdf form');
    expect(found[0]?.spec.name).toBe('pdf-forms');
    const text = searchResultText(found, 'fill in this pdf form');
    expect(text).toContain('Skills that match (activate one with the skill tool');
    expect(text).toContain('- pdf-forms: Fills PDF forms');
  });
});

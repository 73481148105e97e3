import { describe, expect, it } from 'vitest';
import {
  clientProfile,
  filterTools,
  isIncluded,
  modelProfile,
  requirementsOf,
  type CatalogTool,
  type ConsumerProfile,
  type PolicyDecision,
} from '../../../src/main/engine/capabilities.ts';
import type { McpToolFact } from '../../../src/workers/protocol/mcp.ts';

const tool = (name: string, extra: Partial<CatalogTool> = {}): CatalogTool => ({
  name: `srv__${name}`,
  kind: 'mcp',
  server: 'srv',
  tool: name,
  readOnly: true,
  destructive: false,
  openWorld: false,
  ...extra,
});

const observed = (name: string, ...facts: McpToolFact[]) => tool(name, { observed: facts });

/** The rows of the matrix: a tool, and what the policy says of it. */
const TOOLS: [string, CatalogTool, PolicyDecision][] = [
  ['plain', tool('plain'), 'allow'],
  ['asks (policy)', tool('asks', { readOnly: false }), 'ask'],
  ['denied', tool('denied'), 'deny'],
  ['elicits', observed('elicits', 'elicitation'), 'allow'],
  ['samples', observed('samples', 'sampling'), 'allow'],
  ['roots', observed('roots', 'roots'), 'allow'],
  ['progress', observed('progress', 'progress'), 'allow'],
  ['image-only', observed('image', 'images'), 'allow'],
  ['audio-only', observed('audio', 'audio'), 'allow'],
  ['binary + large', observed('blob', 'binary', 'large'), 'allow'],
  ['destructive, open-world', tool('rm', { destructive: true, openWorld: true }), 'allow'],
];

const full = { elicitation: { form: {} }, sampling: {}, roots: {} };

/** The columns: consumers by transport and what they declared, and models. */
const PROFILES: [string, ConsumerProfile][] = [
  ['stdio, all declared', clientProfile({ name: 'a', transport: 'stdio' }, full)],
  ['stdio, nothing declared', clientProfile({ name: 'b', transport: 'stdio' }, {})],
  [
    'http session, elicitation',
    clientProfile({ name: 'c', transport: 'http' }, { elicitation: {} }),
  ],
  ['http stateless, all declared', clientProfile({ name: 'd', transport: 'http-stateless' }, full)],
  ['ws, all declared', clientProfile({ name: 'e', transport: 'ws' }, full)],
  [
    'url elicitation only',
    clientProfile({ name: 'f', transport: 'stdio' }, { elicitation: { url: {} } }),
  ],
  ['model, vision', modelProfile({ name: 'm', vision: true, toolProtocol: 'native' })],
  ['model, no vision', modelProfile({ name: 'm', vision: false, toolProtocol: 'native' })],
  ['model, text protocol', modelProfile({ name: 'm', vision: true, toolProtocol: 'text' })],
];

// Y: offered, -: hidden. Columns in PROFILES order.
const MATRIX: Record<string, string> = {
  plain: '          Y Y Y Y Y Y Y Y Y',
  'asks (policy)': '  Y - Y - Y - Y Y Y',
  denied: '         - - - - - - Y Y Y',
  elicits: '        Y - Y - Y - Y Y Y',
  samples: '        Y - - - Y - Y Y Y',
  roots: '          Y Y Y Y Y Y Y Y Y',
  progress: '       Y Y Y Y Y Y Y Y Y',
  'image-only': '     Y Y Y Y Y Y Y - -',
  'audio-only': '     Y Y Y Y Y Y - - -',
  'binary + large': ' Y Y Y Y Y Y Y Y Y',
  'destructive, open-world': 'Y Y Y Y Y Y Y Y Y',
};

describe('the filtering matrix: who is offered what', () => {
  const cases = TOOLS.flatMap(([row, t, decision]) =>
    PROFILES.map(([column, profile], i) => ({
      row,
      column,
      t,
      decision,
      profile,
      offered: MATRIX[row]!.trim().split(/\s+/)[i] === 'Y',
    })),
  );
  it.each(cases)('$row × $column → offered: $offered', ({ t, decision, profile, offered }) => {
    const { offered: got } = filterTools([t], profile, { decide: () => decision });
    expect(got.length === 1).toBe(offered);
  });

  it('says why a tool is hidden', () => {
    const [, noCaps] = PROFILES[1]!;
    const { hidden } = filterTools([tool('asks'), tool('denied')], noCaps, {
      decide: (t) => (t.tool === 'asks' ? 'ask' : 'deny'),
    });
    expect(hidden.map((h) => h.why)).toEqual(['b cannot meet: approval', 'denied by policy']);
  });
});

describe('requirementsOf', () => {
  it('derives requirements from what was observed, the policy and the annotations', () => {
    expect(
      requirementsOf(
        tool('x', { observed: ['images', 'progress'], destructive: true, openWorld: true }),
        'ask',
      ),
    ).toEqual(['approval', 'progress', 'images', 'destructive', 'open-world']);
    expect(requirementsOf(tool('y'), 'allow')).toEqual([]);
  });
});

describe('config and consumer overrides', () => {
  const builtin: CatalogTool = {
    name: 'bash',
    kind: 'builtin',
    tool: 'bash',
    readOnly: false,
    destructive: true,
    openWorld: true,
  };
  const tools = [builtin, tool('say'), tool('add'), tool('env'), tool('env_keys')];
  const names = (profile: ConsumerProfile, rules = {}) =>
    filterTools(tools, profile, rules).offered.map((o) => o.tool.name);
  const client = (over = {}) =>
    clientProfile({ name: 'claude-code', transport: 'stdio' }, full, over);

  it('applies mcpServers.X.includeTools/excludeTools (exclude wins) and tools.disabled', () => {
    const servers = new Map([['srv', { include: ['say', 'add', 'env*'], exclude: ['env_keys'] }]]);
    expect(names(client(), { servers, disabledBuiltins: ['bash'] })).toEqual([
      'srv__say',
      'srv__add',
      'srv__env',
    ]);
  });

  it('applies serve.clients.<name> include/exclude by tool or server name', () => {
    expect(names(client({ include: ['srv'] }))).toHaveLength(4);
    expect(names(client({ include: ['srv__*'], exclude: ['srv__env*'] }))).toEqual([
      'srv__say',
      'srv__add',
    ]);
    expect(names(client({ exclude: ['srv'] }))).toEqual(['bash']);
  });

  it("keeps a session's switched-off tools and servers from the model", () => {
    const model = modelProfile(
      { name: 'm', vision: false, toolProtocol: 'native' },
      new Set(['bash', 'srv__env']),
    );
    expect(names(model)).toEqual(['srv__say', 'srv__add', 'srv__env_keys']);
  });

  it.each([
    ['read', undefined, undefined, true],
    ['read', ['read'], undefined, true],
    ['write', ['read'], undefined, false],
    ['write', [], undefined, false],
    ['read_file', ['read_*'], undefined, true],
    ['read_file', ['read_*'], ['read_file'], false],
    ['read', undefined, ['*'], false],
    ['a.b', ['a.b'], undefined, true],
    ['axb', ['a.b'], undefined, false],
  ])('isIncluded %s include=%j exclude=%j → %s', (name, include, exclude, expected) => {
    expect(isIncluded(name, { include, exclude })).toBe(expected);
  });
});

import { describe, expect, it } from 'vitest';
import {
  assignToolNames,
  modelName,
  TOOL_NAME_PATTERN,
} from '../../../src/workers/mcp/naming.ts';

describe('assignToolNames', () => {
  it.each([
    ['github', 'create_issue', 'github__create_issue'],
    ['my.server', 'get item', 'my_server__get_item'],
    ['srv', 'ünï', 'srv___n_'],
    ['', '', '____'],
  ])('sanitizes %j / %j to %j', (server, tool, expected) => {
    const name = modelName(assignToolNames([{ server, tool }]), { server, tool })!;
    expect(name).toBe(expected);
    expect(name).toMatch(TOOL_NAME_PATTERN);
  });

  it('shortens long names with a stable hash suffix', () => {
    const ref = { server: 's'.repeat(40), tool: 't'.repeat(40) };
    const name = modelName(assignToolNames([ref]), ref)!;
    expect(name).toHaveLength(64);
    expect(name).toMatch(TOOL_NAME_PATTERN);
    expect(name).toMatch(/_[0-9a-f]{8}$/);
    expect(modelName(assignToolNames([{ server: 'other', tool: 'x' }, ref]), ref)).toBe(name);
  });

  it('resolves collisions deterministically, whatever the order', () => {
    const refs = [
      { server: 'a', tool: 'get.item' },
      { server: 'a', tool: 'get_item' },
      { server: 'a__b', tool: 'c' },
      { server: 'a', tool: 'b__c' },
      { server: 'a', tool: 'plain' },
    ];
    const one = assignToolNames(refs);
    const two = assignToolNames([...refs].reverse());
    expect([...one.toModel]).toEqual([...two.toModel]);
    const names = refs.map((r) => modelName(one, r)!);
    expect(new Set(names).size).toBe(refs.length);
    expect(names.every((n) => TOOL_NAME_PATTERN.test(n))).toBe(true);
    expect(modelName(one, { server: 'a', tool: 'plain' })).toBe('a__plain');
    for (const ref of refs) expect(one.fromModel.get(modelName(one, ref)!)).toEqual(ref);
  });

  it('never lets a hashed name take a plain name', () => {
    const refs = Array.from({ length: 200 }, (_, i) => ({ server: 'x', tool: `t.${i}` })).concat(
      Array.from({ length: 200 }, (_, i) => ({ server: 'x', tool: `t_${i}` })),
    );
    const table = assignToolNames(refs);
    expect(table.fromModel.size).toBe(400);
  });
});

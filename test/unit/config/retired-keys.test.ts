import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/main/extensions/workspace-config.ts';
import { makeWorkspace } from './helpers.ts';

describe('retired keys', () => {
  it('an old config with tools.searchLimits.maxFiles and maxBytes still loads, with a warning for each', () => {
    const ws = makeWorkspace();
    ws.writeGlobal(
      'tools:\n  searchLimits:\n    timeout: 12\n    maxFiles: 20000\n    maxBytes: 1000\n',
    );
    const result = loadConfig({ cwd: ws.repo, env: ws.env });
    if (!result.ok) throw result.error;
    expect(result.value.config.tools.searchLimits.timeout).toBe(12);
    for (const key of ['maxFiles', 'maxBytes'])
      expect(
        result.value.warnings.some((w) =>
          w.startsWith(
            `tools.searchLimits.${key} is no longer used: grep and glob search the whole workspace`,
          ),
        ),
      ).toBe(true);
  });

  it('a config without them says nothing about them', () => {
    const ws = makeWorkspace();
    ws.writeGlobal('tools:\n  searchLimits:\n    timeout: 12\n');
    const result = loadConfig({ cwd: ws.repo, env: ws.env });
    if (!result.ok) throw result.error;
    expect(result.value.warnings.join('\n')).not.toContain('searchLimits');
  });
});

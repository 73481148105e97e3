import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ResolvedServer } from '../../../src/main/config/load.ts';
import { serverInstructions } from '../../../src/main/engine/mcp-handlers.ts';
import { buildSystemPrompt, MAX_INSTRUCTIONS } from '../../../src/main/engine/context/prompt.ts';
import { server } from '../ui/fixtures.ts';

const root = mkdtempSync(path.join(tmpdir(), 'niffler-instructions-'));

describe('MCP server instructions in the system prompt', () => {
  it('come under their server name, after what niffler is, bounded per server and in all', async () => {
    const long = 'x'.repeat(MAX_INSTRUCTIONS.perServer + 50);
    const { text } = await buildSystemPrompt({
      root,
      home: root,
      git: false,
      hasTools: true,
      trusted: false,
      instructions: [
        { server: 'git', text: '  Use git__log before git__blame.  ' },
        { server: 'big', text: long },
        { server: 'more', text: long },
        { server: 'last', text: long },
        { server: 'gone', text: 'never reached' },
      ],
    });
    expect(text).toMatch(/^You are niffler/);
    expect(text).toContain('## Instructions from MCP servers');
    expect(text).toContain('### git\n\nUse git__log before git__blame.');
    expect(text).toContain(`### big\n\n${'x'.repeat(MAX_INSTRUCTIONS.perServer)}\n\n[cut here]`);
    expect(text).not.toContain('never reached');
    expect(text.length).toBeLessThan(MAX_INSTRUCTIONS.total + 2_000);
  });

  it('has no section without instructions', async () => {
    const { text } = await buildSystemPrompt({
      root,
      home: root,
      git: false,
      hasTools: false,
      trusted: true,
    });
    expect(text).not.toContain('Instructions from MCP servers');
  });

  it('takes only ready servers the user trusts', () => {
    const config = (name: string, trust: ResolvedServer['trust'], enabled = true) =>
      ({ name, trust, enabled }) as ResolvedServer;
    const statuses = [
      server('mine', 'ready', { instructions: 'a' }),
      server('repo', 'ready', { instructions: 'b' }),
      server('stranger', 'ready', { instructions: 'c' }),
      server('down', 'failed', { instructions: 'd' }),
      server('quiet', 'ready', { instructions: '  ' }),
    ];
    expect(
      serverInstructions(statuses, [
        config('mine', 'yours'),
        config('repo', 'trusted'),
        config('stranger', 'untrusted'),
        config('down', 'yours'),
        config('quiet', 'yours'),
      ]),
    ).toEqual([
      { server: 'mine', text: 'a' },
      { server: 'repo', text: 'b' },
    ]);
  });
});

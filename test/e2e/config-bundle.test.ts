import { isBuiltin } from 'node:module';
import path from 'node:path';
import { build, type BuildOptions, type Metafile } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { configBuildOptions } from '../../scripts/build-options.mjs';
import { niffler } from './cli.ts';
import { makeE2eWorkspace } from './workspace.ts';

/** What esbuild would write for `options`, as its metafile's outputs, without writing it. */
const outputsOf = async (options: BuildOptions): Promise<Metafile['outputs']> =>
  (await build({ ...options, write: false, metafile: true, sourcemap: false, logLevel: 'silent' }))
    .metafile.outputs;

describe('the config commands (dist/config.cjs)', () => {
  it('are one file with no Ink, React, MCP SDK, zod, JSON-RPC library or tools in it', async () => {
    // Besides the bundle, only the licence comments of what it bundles (legalComments: linked).
    const [output, ...others] = Object.entries(
      await outputsOf(configBuildOptions(path.join('dist', '.metafile-probe'))),
    )
      .filter(([file]) => !file.endsWith('.LEGAL.txt'))
      .map(([, out]) => out);
    expect(others).toEqual([]);
    // Node's own modules, and zod's bundle of its own, loaded only for a parse it must make.
    expect(output!.imports.filter((i) => !isBuiltin(i.path)).map((i) => i.path)).toEqual([]);
    const packages = new Set(
      Object.keys(output!.inputs).flatMap(
        (input) => /node_modules\/((@[^/]+\/)?[^/]+)\//.exec(input)?.[1] ?? [],
      ),
    );
    // The other assistants' MCP configs are read too: Codex's TOML, Gemini's and opencode's JSONC.
    expect([...packages].sort()).toEqual([
      'commander',
      'croner',
      'jsonc-parser',
      'smol-toml',
      'yaml',
    ]);
  });

  it('give a bad config the same error as every other command, and a good one the same answer', async () => {
    const ws = makeE2eWorkspace();
    ws.writeGlobal('mcpServers:\n  memory: { comand: node }\n');
    // `tools` loads the config in dist/main.js, with zod itself.
    const fromMain = await niffler(['tools'], { cwd: ws.repo, env: ws.env });
    for (let run = 0; run < 2; run++) {
      const fast = await ws.run(['mcp', 'list']);
      expect(fast.exitCode).toBe(fromMain.exitCode);
      expect(fast.stderr).toBe(fromMain.stderr);
      expect(fast.stderr).toContain('unknown key; did you mean "command"?');
    }
    ws.writeGlobal('mcpServers:\n  memory: { command: node, args: [m.js] }\n');
    const answers = [
      await ws.run(['mcp', 'list', '--json']),
      await ws.run(['mcp', 'list', '--json']),
    ];
    expect(answers[1]).toEqual(answers[0]);
    expect(JSON.parse(answers[0]!.stdout)).toMatchObject([
      { name: 'memory', transport: 'stdio', trust: 'yours' },
    ]);
  });
});

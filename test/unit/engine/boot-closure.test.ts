import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildOptions } from '../../../scripts/build-options.mjs';
import { metafileOf } from '../../fixtures/metafile.ts';

// A cold daemon runs engine/boot.ts (read the config, spawn the servers) before it loads the rest
// of the engine: whatever boot.ts imports statically is on the way to the servers' spawn.
describe("the daemon's boot (engine/boot.ts), bundled as dist/ is", () => {
  it('loads the config and its readers, not the engine, the tools or a model or MCP library', async () => {
    const metafile = await metafileOf({
      ...buildOptions({ boot: 'src/main/engine/boot.ts' }, path.join('dist', '.metafile-probe')),
      splitting: false,
    });
    const seen = new Set<string>();
    const visit = (file: string): void => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const i of metafile.inputs[file]?.imports ?? [])
        if (i.kind === 'import-statement' && metafile.inputs[i.path]) visit(i.path);
    };
    visit('src/main/engine/boot.ts');
    const packages = new Set(
      [...seen].flatMap((input) => /node_modules\/((@[^/]+\/)?[^/]+)\//.exec(input)?.[1] ?? []),
    );
    expect([...packages].sort()).toEqual(['croner', 'jsonc-parser', 'smol-toml', 'yaml', 'zod']);
    expect(seen).toContain('src/main/config/schema.ts');
    // The built-in tools' argument schemas (~40 zod objects) and the engine itself come after.
    for (const later of [
      'src/workers/protocol/tool-args.ts',
      'src/workers/protocol/builtin-tools.ts',
      'src/main/engine/engine.ts',
    ])
      expect(seen).not.toContain(later);
  });
});

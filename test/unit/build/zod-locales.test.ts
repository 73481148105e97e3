import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it, onTestFinished } from 'vitest';
import { buildOptions, daemonBodyBuildOptions } from '../../../scripts/build-options.mjs';
import { metafileOf } from '../../fixtures/metafile.ts';

// The build keeps zod's English messages alone (zodEnglishOnly in scripts/build-options.mjs): the
// other languages were ~300 KB of source in every thread that loads zod.
const locales = (inputs: Record<string, unknown>) =>
  Object.keys(inputs)
    .filter((file) => !file.startsWith('zod-en:') && /zod\/v4\/locales\//.test(file))
    .map((file) => path.basename(file));

describe("zod's locales in the build", () => {
  it('are English alone, in the daemon body and in a worker', async () => {
    const body = await metafileOf(daemonBodyBuildOptions(path.join('dist', '.metafile-probe')));
    expect(locales(body.inputs)).toEqual(['en.js']);
    const worker = await metafileOf(
      buildOptions({ mcp: 'src/workers/mcp/worker.ts' }, path.join('dist', '.metafile-probe')),
    );
    expect(locales(worker.inputs)).toEqual(['en.js']);
  });

  it('leave zod telling its errors in English, with z.locales.en and z.core.locales.en', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'nf-zod-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const entry = path.join(dir, 'entry.ts');
    writeFileSync(
      entry,
      [
        "import { z } from 'zod';",
        'export const message = z.object({ n: z.number() }).safeParse({ n: "x" }).error?.issues[0]?.message;',
        'export const names = [Object.keys(z.locales), Object.keys(z.core.locales)];',
        'export const english = typeof z.locales.en === "function";',
      ].join('\n'),
    );
    const options = buildOptions({ entry }, dir);
    await build({
      ...options,
      nodePaths: [path.resolve('node_modules')],
      sourcemap: false,
      logLevel: 'silent',
    });
    const built = (await import(pathToFileURL(path.join(dir, 'entry.js')).href)) as {
      message: string;
      names: string[][];
      english: boolean;
    };
    expect(built.message).toBe('Invalid input: expected number, received string');
    expect(built.names).toEqual([['en'], ['en']]);
    expect(built.english).toBe(true);
  });
});

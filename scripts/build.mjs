// Bundles each process and thread entry into dist/, so start-up loads a few files instead of
// thousands of node_modules files. Heavy modules stay behind dynamic imports (code splitting).
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { chmod, readFile, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import {
  buildOptions,
  configBuildOptions,
  daemonBodyBuildOptions,
  daemonBuildOptions,
  fastBuildOptions,
  launcherBuildOptions,
  zodBuildOptions,
} from './build-options.mjs';

const entries = {
  main: 'src/ui/main.ts',
  'workers/mcp': 'src/workers/mcp/worker.ts',
  'workers/api': 'src/workers/api/worker.ts',
  'workers/tools': 'src/workers/tools/worker.ts',
  'workers/lsp': 'src/workers/lsp/worker.ts',
};

const entryPoints = Object.fromEntries(
  Object.entries(entries).filter(([, file]) => existsSync(file)),
);

await rm('dist', { recursive: true, force: true });
await build(buildOptions(entryPoints, 'dist'));
await build(fastBuildOptions('dist'));
await build(configBuildOptions('dist'));
await build(zodBuildOptions('dist'));
await build(daemonBodyBuildOptions('dist'));
const digest = async (file) =>
  createHash('sha256')
    .update(await readFile(file))
    .digest('hex')
    .slice(0, 16);
await build(
  launcherBuildOptions('dist', await digest('dist/fast.cjs'), await digest('dist/config.cjs')),
);
await build(daemonBuildOptions('dist', await digest('dist/daemon-body.cjs')));
await chmod('dist/cli.cjs', 0o755);

// Bundles each process and thread entry into dist/, so start-up loads a few files instead of
// thousands of node_modules files. Heavy modules stay behind dynamic imports (code splitting).
import { build } from 'esbuild';
import { chmod, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';

const entries = {
  cli: 'src/ui/cli.ts',
  daemon: 'src/main/daemon/main.ts',
  'workers/mcp': 'src/workers/mcp/worker.ts',
  'workers/api': 'src/workers/api/worker.ts',
  'workers/tools': 'src/workers/tools/worker.ts',
};

/** Points vscode-jsonrpc's `require('crypto')` at a shim that loads node:crypto on first use. */
const lazyCrypto = {
  name: 'lazy-crypto',
  setup(build) {
    build.onResolve({ filter: /^crypto$/ }, (args) =>
      args.importer.includes(`${path.sep}vscode-jsonrpc${path.sep}`)
        ? { path: path.resolve('scripts/lazy-crypto.cjs') }
        : undefined,
    );
  },
};

const entryPoints = Object.fromEntries(
  Object.entries(entries).filter(([, file]) => existsSync(file)),
);

await rm('dist', { recursive: true, force: true });
await build({
  entryPoints,
  outdir: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node22',
  jsx: 'automatic',
  sourcemap: 'linked',
  chunkNames: 'chunks/[name]-[hash]',
  logLevel: 'warning',
  plugins: [lazyCrypto],
  // React and its reconciler ship development builds behind this check: drop them from the bundle.
  define: { 'process.env.NODE_ENV': '"production"' },
  // Packages that load files next to themselves at run time, or are optional, stay external.
  external: ['piscina', 'react-devtools-core', 'node'],
  // CommonJS dependencies inside an ESM bundle still call require().
  banner: {
    js: "import { createRequire as __nifflerCreateRequire } from 'node:module'; const require = __nifflerCreateRequire(import.meta.url);",
  },
});
await chmod('dist/cli.js', 0o755);

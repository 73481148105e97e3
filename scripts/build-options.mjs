// The esbuild options of dist/, shared by the build and by the test that checks which modules
// each path loads (so that test sees exactly what ships).
import path from 'node:path';

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

/**
 * `src/ui/fast.ts`, the fast path of the hot listings, is its own self-contained bundle
 * (`dist/fast.js`, see `fastBuildOptions`): the main build leaves `import('./fast.ts')` to it.
 */
const fastExternal = {
  name: 'fast-external',
  setup(build) {
    build.onResolve({ filter: /^\.\/fast\.ts$/ }, () => ({ path: './fast.js', external: true }));
  },
};

/** esbuild options for bundling `entryPoints` into `outdir` with code splitting. */
export const buildOptions = (entryPoints, outdir) => ({
  entryPoints,
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node22',
  jsx: 'automatic',
  sourcemap: 'linked',
  chunkNames: 'chunks/[name]-[hash]',
  logLevel: 'warning',
  plugins: [lazyCrypto, fastExternal],
  // React and its reconciler ship development builds behind this check: drop them from the bundle.
  define: { 'process.env.NODE_ENV': '"production"' },
  // Packages that load files next to themselves at run time, or are optional, stay external.
  external: ['piscina', 'react-devtools-core', 'node'],
  // CommonJS dependencies inside an ESM bundle still call require().
  banner: {
    js: "import { createRequire as __nifflerCreateRequire } from 'node:module'; const require = __nifflerCreateRequire(import.meta.url);",
  },
});

/**
 * esbuild options for `dist/fast.js`: the fast path in one file, with no chunks to resolve and
 * load one by one (each ESM module costs a few tenths of a millisecond at start-up).
 */
export const fastBuildOptions = (outdir) => ({
  ...buildOptions({ fast: 'src/ui/fast.ts' }, outdir),
  splitting: false,
  plugins: [lazyCrypto],
});

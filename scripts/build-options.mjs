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
 * Ink's layout engine (yoga-layout) carries its WebAssembly as a base64 `data:` URL, and its
 * Emscripten loader reads it with `fetch` wherever `fetch` is a function — in Node, undici, loaded
 * for it alone: ~30-50 ms of the interactive front-end before its first frame, for a URL whose
 * bytes are already in the file. Its loader's other path decodes them (`atob`): the check of
 * `fetch` reads as false. Both places must be found, or the build fails (a new yoga to look at).
 */
export const yogaWithoutFetch = {
  name: 'yoga-without-fetch',
  setup(build) {
    build.onLoad(
      { filter: /yoga-layout[\\/]dist[\\/]binaries[\\/]yoga-wasm-base64-esm\.js$/ },
      async (args) => {
        const { readFile } = await import('node:fs/promises');
        const source = await readFile(args.path, 'utf8');
        const check = '"function"!=typeof fetch';
        const found = source.split(check).length - 1;
        if (found !== 2)
          throw new Error(
            `yoga-without-fetch: expected 2 checks of fetch in ${args.path}, found ${found}`,
          );
        return { contents: source.replaceAll(check, 'true'), loader: 'js' };
      },
    );
  },
};

/**
 * Ink and its helpers (wrap-ansi, cli-truncate, widest-line, slice-ansi) import `string-width`:
 * they get src/ui/render/string-width.ts, which measures text of code points that are each their
 * own grapheme cluster without string-width's Unicode path and hands anything else to string-width
 * itself. Only the top-level string-width is replaced (older majors nested under other packages
 * keep their own); the wrapper's own import is the real one.
 */
export const ownStringWidth = {
  name: 'own-string-width',
  setup(build) {
    const own = path.resolve('src/ui/render/string-width.ts');
    const real = path.resolve('node_modules/string-width/index.js');
    build.onResolve({ filter: /^string-width$/ }, async (args) => {
      if (args.importer === own || args.pluginData?.ownStringWidth) return undefined;
      const resolved = await build.resolve(args.path, {
        kind: args.kind,
        importer: args.importer,
        resolveDir: args.resolveDir,
        pluginData: { ownStringWidth: true },
      });
      return resolved.path === real ? { path: own } : undefined;
    });
  },
};

/**
 * zod's `locales` namespace (`z.locales`, `z.core.locales`) carries the error messages of every
 * language zod speaks (~300 KB of the ~600 KB a bundle of zod holds), and `import { z } from 'zod'`
 * brings all of it. niffler's errors are English, and English is what zod configures itself with
 * (classic/schemas.js): every thread that loads zod (the daemon's, the MCP, tools and config ones)
 * kept the source of the others resident. zod's `locales` namespace holds `en` alone here; a test
 * checks that no other language is bundled (test/unit/build/zod-locales.test.ts).
 */
export const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]v4[\\/]/.test(args.importer)
        ? {
            path: path.join(path.dirname(args.importer), '..', 'locales', 'en.js'),
            namespace: 'zod-en',
          }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'zod-en' }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(args.path)};`,
      loader: 'js',
      resolveDir: path.dirname(args.path),
    }));
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
  // No comments nor indentation: V8 keeps every module's source in each thread that loads it, and
  // one non-ASCII character in a comment makes the whole source UTF-16 (twice the bytes). Strings
  // are ASCII already (esbuild escapes them); licences go to a .LEGAL.txt beside each file.
  minifyWhitespace: true,
  legalComments: 'linked',
  chunkNames: 'chunks/[name]-[hash]',
  logLevel: 'warning',
  plugins: [lazyCrypto, yogaWithoutFetch, ownStringWidth, zodEnglishOnly],
  // jsonc-parser's main build is UMD, whose require('./impl/…') esbuild cannot follow: its ESM one.
  alias: { 'jsonc-parser': 'jsonc-parser/lib/esm/main.js' },
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
 * The launcher's imports of the other bundles stay imports: `./fast.ts` is dist/fast.cjs, and
 * `./main.ts` is dist/main.js, an entry of the main build.
 */
const launcherExternals = {
  name: 'launcher-externals',
  setup(build) {
    const bundles = {
      './fast.ts': './fast.cjs',
      './config-fast.ts': './config.cjs',
      './main.ts': './main.js',
    };
    build.onResolve({ filter: /^\.\/(fast|config-fast|main)\.ts$/ }, (args) => ({
      path: bundles[args.path],
      external: true,
    }));
  },
};

/**
 * esbuild options for a CommonJS bundle in one file, with no chunks to resolve and load one by one
 * (each ES module costs a few tenths of a millisecond at start-up, and Node's ES module loader
 * itself a few milliseconds). `import.meta.url` is the file's own URL, as in the ES modules.
 */
const commonJsOptions = (entryPoints, outdir) => {
  const options = buildOptions(entryPoints, outdir);
  return {
    ...options,
    splitting: false,
    format: 'cjs',
    outExtension: { '.js': '.cjs' },
    // `import('node:x')` becomes a lazy require: the fast path runs in a vm.Script, which would need
    // Node's experimental loader hook (and print its warning) for a real dynamic import.
    supported: { 'dynamic-import': false },
    define: {
      ...options.define,
      'import.meta.url': '__nifflerImportMetaUrl',
    },
    // The bundle's own "use strict" comes after the banner, where it is no directive: the banner
    // carries it.
    banner: {
      js: "'use strict';\nconst __nifflerImportMetaUrl = require('node:url').pathToFileURL(__filename).href;",
    },
  };
};

/**
 * esbuild options for `dist/cli.cjs`, the bin: `--version` and the routing to the fast path or the
 * main build, with nothing else in it.
 */
export const launcherBuildOptions = (outdir, fastBuild = '', configBuild = '') => {
  const options = commonJsOptions({ cli: 'src/ui/cli.ts' }, outdir);
  return {
    ...options,
    // Digests of dist/fast.cjs and dist/config.cjs, part of their code caches' keys: a rebuild
    // never meets the cache of the build before, even where file times are too coarse to tell
    // them apart.
    define: {
      ...options.define,
      __NIFFLER_FAST_BUILD__: JSON.stringify(fastBuild),
      __NIFFLER_CONFIG_BUILD__: JSON.stringify(configBuild),
    },
    plugins: [launcherExternals],
  };
};

/**
 * esbuild options for `dist/daemon-body.cjs`, the daemon's main thread after its entry
 * (src/main/daemon/body.ts): one file, loaded by the entry through a code cache.
 */
export const daemonBodyBuildOptions = (outdir) =>
  commonJsOptions({ 'daemon-body': 'src/main/daemon/body.ts' }, outdir);

/** The daemon entry's import of its body stays an import: `./body.ts` is dist/daemon-body.cjs. */
const daemonBodyExternal = {
  name: 'daemon-body-external',
  setup(build) {
    build.onResolve({ filter: /^\.\/body\.ts$/ }, () => ({
      path: './daemon-body.cjs',
      external: true,
    }));
  },
};

/**
 * esbuild options for `dist/daemon.cjs`, the daemon process's entry (src/main/daemon/main.ts),
 * given the digest of dist/daemon-body.cjs for its code cache's key.
 */
export const daemonBuildOptions = (outdir, bodyBuild = '') => {
  const options = commonJsOptions({ daemon: 'src/main/daemon/main.ts' }, outdir);
  return {
    ...options,
    define: { ...options.define, __NIFFLER_DAEMON_BUILD__: JSON.stringify(bodyBuild) },
    plugins: [daemonBodyExternal],
  };
};

/**
 * esbuild options for `dist/fast.cjs`, the fast path of the hot listings (`src/ui/fast.ts`): one
 * file, loaded by the launcher through a code cache (see src/main/code-cache.ts).
 */
export const fastBuildOptions = (outdir) => commonJsOptions({ fast: 'src/ui/fast.ts' }, outdir);

/** The command modules dist/config.cjs runs (see src/ui/config-fast.ts); any other is left out. */
const CONFIG_COMMANDS = new Set([
  'mcp.ts',
  'config.ts',
  'trust.ts',
  'extensions.ts',
  'task-views.ts',
]);

/**
 * dist/config.cjs: niffler's own modules get lazy-zod.ts for `zod` (the entry alone gets the real
 * one), and the command tree's other commands, which it never runs, are left out.
 */
const configCommands = {
  name: 'config-commands',
  setup(build) {
    const lazyZod = path.resolve('src/main/config/lazy-zod.ts');
    const entry = path.resolve('src/ui/config-fast.ts');
    const own = (file) =>
      file.startsWith(path.resolve('src')) || file.startsWith(path.resolve('test/fixtures'));
    build.onResolve({ filter: /^zod$/ }, (args) =>
      own(args.importer) && args.importer !== entry ? { path: lazyZod } : undefined,
    );
    // commander's spawning of executable subcommands (niffler has none): loaded on first use.
    build.onResolve({ filter: /^(node:)?child_process$/ }, (args) =>
      args.importer.includes(`${path.sep}commander${path.sep}`)
        ? { path: path.resolve('scripts/lazy-child-process.cjs') }
        : undefined,
    );
    // What the command tree's other commands run, and the daemon client a trust change uses.
    build.onResolve({ filter: /^\.\/commands\/[\w-]+\.tsx?$|\/daemon\/lifecycle\.ts$/ }, (args) =>
      args.kind === 'dynamic-import' && !CONFIG_COMMANDS.has(path.basename(args.path))
        ? { path: path.resolve('scripts/not-a-config-command.cjs') }
        : undefined,
    );
  },
};

/**
 * esbuild options for `dist/config.cjs` (src/ui/config-fast.ts): one file, through a code cache.
 * A test bundles its own entry this very way (`entryPoints`).
 */
export const configBuildOptions = (outdir, entryPoints = { config: 'src/ui/config-fast.ts' }) => {
  const options = commonJsOptions(entryPoints, outdir);
  return { ...options, plugins: [...options.plugins, configCommands] };
};

/** esbuild options for `dist/zod.cjs`: zod alone, which dist/config.cjs loads when it must. */
export const zodBuildOptions = (outdir) => ({
  ...commonJsOptions({ zod: 'scripts/zod-entry.mjs' }, outdir),
  legalComments: 'linked',
});

import type { BuildOptions, Plugin } from 'esbuild';

export declare const buildOptions: (
  entryPoints: Record<string, string>,
  outdir: string,
) => BuildOptions;

export declare const fastBuildOptions: (outdir: string) => BuildOptions;

export declare const configBuildOptions: (
  outdir: string,
  entryPoints?: Record<string, string>,
) => BuildOptions;

export declare const zodBuildOptions: (outdir: string) => BuildOptions;

export declare const daemonBodyBuildOptions: (outdir: string) => BuildOptions;

export declare const daemonBuildOptions: (outdir: string, bodyBuild?: string) => BuildOptions;

export declare const launcherBuildOptions: (
  outdir: string,
  fastBuild?: string,
  configBuild?: string,
) => BuildOptions;

/** Ink's layout engine read without fetch (see build-options.mjs). */
export declare const yogaWithoutFetch: Plugin;

/** zod's `locales` namespace with English alone (see build-options.mjs). */
export declare const zodEnglishOnly: Plugin;

/** Ink's `string-width` imports pointed at src/ui/render/string-width.ts (see build-options.mjs). */
export declare const ownStringWidth: Plugin;

import type { BuildOptions } from 'esbuild';

export declare const buildOptions: (
  entryPoints: Record<string, string>,
  outdir: string,
) => BuildOptions;

export declare const fastBuildOptions: (outdir: string) => BuildOptions;

export declare const launcherBuildOptions: (outdir: string, fastBuild?: string) => BuildOptions;

import { copyFileSync, existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { findWorkspace, packageDir, tildify } from '../../main/paths.ts';
import type { GlobalOptions } from '../context.ts';
import { print, printJson } from '../render/output.ts';

const listFiles = (dir: string, base = dir): string[] =>
  readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    return statSync(file).isDirectory() ? listFiles(file, base) : [path.relative(base, file)];
  });

/** `niffler init`: writes `.niffler/` at the workspace root from `.niffler.example/`; never overwrites. */
export const init = (options: GlobalOptions): void => {
  const { root } = findWorkspace(options.cwd ?? process.cwd());
  const source = path.join(packageDir(), '.niffler.example');
  const target = path.join(root, '.niffler');
  const written: string[] = [];
  const kept: string[] = [];
  for (const file of listFiles(source)) {
    const to = path.join(target, file);
    if (existsSync(to)) {
      kept.push(to);
      continue;
    }
    mkdirSync(path.dirname(to), { recursive: true });
    copyFileSync(path.join(source, file), to);
    written.push(to);
  }
  if (options.json) {
    printJson({ root, written, kept });
    return;
  }
  for (const file of written) print(`created ${tildify(file)}`);
  for (const file of kept) print(`kept    ${tildify(file)} (exists; not overwritten)`);
  if (written.length)
    print(
      `\nEdit ${tildify(path.join(target, 'config.yaml'))}, then run niffler trust so its MCP servers may start.`,
    );
};

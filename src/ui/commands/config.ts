import { Document, isMap, isPair, isScalar, isSeq, visit } from 'yaml';
import type { LoadedConfig } from '../../main/extensions/workspace-config.ts';
import { originKey, type Origin } from '../../main/config/merge.ts';
import { redact } from '../../main/config/redact.ts';
import { tildify } from '../../main/paths.ts';
import { loadForCommand, type GlobalOptions } from '../context.ts';
import { print, printJson, warn } from '../render/output.ts';

/** `file:line`, the variable (`NIFFLER_MODEL`), the flag (`--set a.b`) or `default`. */
const describeOrigin = (origin: Origin | undefined): string => {
  if (!origin) return 'default';
  if (origin.file) return `${tildify(origin.file)}${origin.line ? `:${origin.line}` : ''}`;
  return origin.label ?? origin.kind;
};

const originOf = (loaded: LoadedConfig, path: readonly PropertyKey[]): Origin | undefined => {
  for (let i = path.length; i > 0; i--) {
    const found = loaded.origins.get(originKey(path.slice(0, i)));
    if (found) return found;
  }
  return undefined;
};

/** The merged config as YAML, secrets redacted; with `origins`, each value commented with its source. */
const renderConfigYaml = (loaded: LoadedConfig, withOrigins: boolean): string => {
  const doc = new Document(redact(loaded.config));
  visit(doc, {
    Map: (_key, node) => void (node.items.length === 0 && (node.flow = true)),
    Seq: (_key, node) => void (node.items.length === 0 && (node.flow = true)),
  });
  if (withOrigins) {
    visit(doc, {
      Pair(_key, pair, ancestors) {
        if (!isScalar(pair.key)) return;
        const path: PropertyKey[] = [];
        for (const node of ancestors)
          if (isPair(node) && isScalar(node.key)) path.push(String(node.key.value));
        path.push(String(pair.key.value));
        const value = pair.value;
        const isLeaf =
          isScalar(value) || isSeq(value) || (isMap(value) && value.items.length === 0);
        if (!isLeaf || !value) return;
        if (!isScalar(value)) value.flow = true;
        value.comment = ` ${describeOrigin(originOf(loaded, path))}`;
      },
    });
  }
  return doc.toString({ lineWidth: 0 });
};

/** `niffler config show [--origin] [--json]`. */
export const configShow = (options: GlobalOptions & { origin?: boolean }): void => {
  const loaded = loadForCommand(options);
  if (options.json) {
    const origins = options.origin
      ? Object.fromEntries(
          [...loaded.origins].map(([key, origin]) => [
            key.split('\u0000').join('.'),
            describeOrigin(origin),
          ]),
        )
      : undefined;
    printJson({
      config: redact(loaded.config),
      ...(origins ? { origins } : {}),
      warnings: loaded.warnings,
    });
    return;
  }
  for (const message of loaded.warnings) warn(message);
  print(renderConfigYaml(loaded, options.origin === true));
};

/** `niffler config path [--json]`: the files looked at, in precedence order, and the root. */
export const configPath = (options: GlobalOptions): void => {
  const loaded = loadForCommand(options);
  const files = [...loaded.files].reverse();
  if (options.json) {
    printJson({ root: loaded.root, isGitRepo: loaded.workspace.isGitRepo, files });
    return;
  }
  print(
    `workspace root: ${loaded.root}${loaded.workspace.isGitRepo ? '' : ' (no .git found: using the current directory)'}`,
  );
  print('config files, highest precedence first:');
  print(`  NIFFLER_* environment and flags`);
  for (const file of files)
    print(
      `  ${file.exists ? '✓' : '-'} ${tildify(file.file)}  (${file.kind}${file.exists ? '' : ', not present'})`,
    );
  print(`  built-in defaults`);
};

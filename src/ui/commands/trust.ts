import type { LoadedConfig } from '../../main/extensions/workspace-config.ts';
import { describeServer } from '../../main/config/redact.ts';
import { promptFilesPresent } from '../../main/engine/context/prompt.ts';
import { nifflerPaths, tildify } from '../../main/paths.ts';
import { formatPlace } from '../../main/config/source.ts';
import {
  revokeRepository,
  showPart,
  trustRepository,
  type Change,
} from '../../main/trust/decide.ts';
import { loadForCommand, type GlobalOptions } from '../context.ts';
import { print, printJson } from '../render/output.ts';

type TrustOptions = GlobalOptions & { revoke?: boolean; diff?: boolean };

/** Tells a running daemon of this repository to apply the new trust now; starts none. */
/** `applied`, `no-daemon`, or why the daemon could not apply it. */
const applyToDaemon = async (root: string): Promise<string> => {
  // Only when trust changes: `trust --diff` runs without the client library (dist/config.cjs).
  const { connectDaemon } = await import('../../main/daemon/lifecycle.ts');
  const client = await connectDaemon({ root, start: false, client: 'trust' }).catch(() => null);
  if (!client) return 'no-daemon';
  try {
    const result = await client.request('config/reload', {});
    return result.ok ? 'applied' : (result.error ?? 'the daemon could not reload its config');
  } finally {
    client.close();
  }
};

const daemonLine = (outcome: string): string | undefined =>
  outcome === 'applied'
    ? 'The running daemon applied it.'
    : outcome === 'no-daemon'
      ? undefined
      : `The running daemon did not apply it: ${outcome}`;

const changeLine = (c: Change): string =>
  c.change === 'added'
    ? `  + ${c.key.replace(/^[^:]+:/, '')}  ${c.place ?? ''}\n      ${c.now}`
    : c.change === 'removed'
      ? `  - ${c.key.replace(/^[^:]+:/, '')}\n      was ${c.was}`
      : `  ~ ${c.key.replace(/^[^:]+:/, '')}  ${c.place ?? ''}\n      was ${c.was}\n      now ${c.now}`;

/** `niffler trust --diff`: what trusting now would accept that was not trusted before. */
const showDiff = (loaded: LoadedConfig, options: TrustOptions): void => {
  const { trust } = loaded;
  const prompts = promptFilesPresent(loaded.root);
  if (options.json) {
    printJson({
      root: loaded.root,
      level: trust.level,
      changes: trust.changes,
      prompts,
      problem: trust.problem ?? null,
    });
    return;
  }
  print(`${loaded.root}: ${trust.level}${trust.problem ? ` (${trust.problem})` : ''}`);
  if (trust.level === 'trusted') {
    print('Nothing changed since you trusted it.');
    return;
  }
  if (trust.changes.length === 0) print('  its config contributes nothing that needs trust');
  for (const change of trust.changes) print(changeLine(change));
  if (prompts.length)
    print(`  prompt files given to the model once trusted: ${prompts.join(', ')}`);
  print('Accept with: niffler trust');
};

/** `niffler trust [--diff | --revoke]`. */
export const trust = async (options: TrustOptions): Promise<void> => {
  const loaded = loadForCommand(options);
  if (options.diff) return showDiff(loaded, options);
  const { trustFile } = nifflerPaths(loaded.root);
  if (options.revoke) {
    const had = revokeRepository(trustFile, loaded.root);
    const daemon = await applyToDaemon(loaded.root);
    if (options.json) return printJson({ root: loaded.root, revoked: had, daemon });
    print(
      had
        ? `Revoked trust for ${loaded.root}: its servers stop, its settings and prompt files are no longer used.`
        : `${loaded.root} was not trusted.`,
    );
    const line = daemonLine(daemon);
    if (line && had) print(line);
    return;
  }
  const { parts } = loaded.trust.contribution;
  const record = trustRepository(trustFile, loaded.root, loaded.trust.contribution);
  const prompts = promptFilesPresent(loaded.root);
  const daemon = await applyToDaemon(loaded.root);
  if (options.json)
    return printJson({
      root: loaded.root,
      trustedAt: record.trustedAt,
      parts: parts.map((p) => ({
        key: p.key,
        place: formatPlace(p.file, p.line, p.path),
        value: showPart(p),
      })),
      prompts,
      daemon,
    });
  print(`Trusted ${loaded.root} as its config stands now:`);
  if (parts.length === 0 && prompts.length === 0)
    print('  (nothing that needs trust today; a later change will ask again)');
  for (const part of parts) {
    const place = tildify(formatPlace(part.file, part.line, []));
    print(
      part.kind === 'server'
        ? `  server ${part.path[1]}: ${describeServer(part.value)}  (${place})`
        : `  ${part.kind} ${part.path.join('.')}: ${showPart(part)}  (${place})`,
    );
  }
  if (prompts.length) print(`  prompt files given to the model: ${prompts.join(', ')}`);
  print(
    'A change to any of these makes it untrusted again; niffler trust --diff shows what changed.',
  );
  const line = daemonLine(daemon);
  if (line) print(line);
};

import { describeServer } from '../../main/config/redact.ts';
import { revokeWorkspace, trustWorkspace } from '../../main/config/trust.ts';
import { nifflerPaths } from '../../main/paths.ts';
import { loadForCommand, type GlobalOptions } from '../context.ts';
import { print, printJson } from '../render/output.ts';

/** `niffler trust [--revoke]`: lets this repository's config start its servers (or stops letting it). */
export const trust = (options: GlobalOptions & { revoke?: boolean }): void => {
  const loaded = loadForCommand(options);
  const { trustFile } = nifflerPaths(loaded.root);
  if (options.revoke) {
    const had = revokeWorkspace(trustFile, loaded.root);
    if (options.json) printJson({ root: loaded.root, revoked: had });
    else
      print(
        had
          ? `Revoked trust for ${loaded.root}: its servers will not start.`
          : `${loaded.root} was not trusted.`,
      );
    return;
  }
  const servers = Object.entries(loaded.gated.servers);
  const record = trustWorkspace(trustFile, loaded.root, loaded.gated);
  if (options.json) {
    printJson({
      root: loaded.root,
      trustedAt: record.trustedAt,
      servers: Object.fromEntries(servers.map(([n, e]) => [n, describeServer(e)])),
      settings: loaded.gated.settings !== undefined,
    });
    return;
  }
  print(`Trusted ${loaded.root}`);
  if (servers.length === 0 && loaded.gated.settings === undefined)
    print('  (its config starts no process today; a later change will ask again)');
  for (const [name, entry] of servers) print(`  server ${name}: ${describeServer(entry)}`);
  if (loaded.gated.settings !== undefined)
    print('  settings: its models, allowed paths and "allow" tool policies');
  print('A changed command, args or url will need niffler trust again.');
};

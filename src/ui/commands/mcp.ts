import { describeServer } from '../../main/config/redact.ts';
import { tildify } from '../../main/paths.ts';
import { loadForCommand, type GlobalOptions } from '../context.ts';
import { formatTable, print, printJson, warn } from '../render/output.ts';
import { truncate } from '../render/format.ts';

/** `niffler mcp list`: configured servers, from the config alone (no daemon, no server started). */
export const mcpList = (options: GlobalOptions): void => {
  const loaded = loadForCommand(options);
  // Why servers are not started (an untrusted repository, a broken trust store), on stderr.
  for (const message of loaded.warnings) warn(message);
  if (options.json) {
    printJson(
      loaded.servers.map((s) => ({
        name: s.name,
        displayName: s.displayName,
        transport: s.transport,
        target: describeServer(s.definition),
        source: s.source.file ?? s.source.kind,
        line: s.source.line ?? null,
        enabled: s.enabled,
        trust: s.trust,
        autoStart: s.autoStart,
      })),
    );
    return;
  }
  if (loaded.servers.length === 0) {
    print('No MCP servers configured. Add one: niffler mcp add NAME -- COMMAND ARGS…');
    return;
  }
  print(
    formatTable(
      ['NAME', 'TRANSPORT', 'ENABLED', 'TRUST', 'SOURCE', 'RUNS'],
      loaded.servers.map((s) => [
        s.name,
        s.transport,
        s.enabled ? 'yes' : 'no',
        s.trust,
        `${tildify(s.source.file ?? s.source.kind)}${s.source.line ? `:${s.source.line}` : ''}`,
        truncate(describeServer(s.definition), 60),
      ]),
    ),
  );
};

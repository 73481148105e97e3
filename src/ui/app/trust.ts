import { loadConfig } from '../../main/config/load.ts';
import { describeServer } from '../../main/config/redact.ts';
import { trustWorkspace } from '../../main/config/trust.ts';
import type { EngineApi as EngineClient } from './deferred-client.ts';
import { nifflerPaths, type Env } from '../../main/paths.ts';
import type { McpServerStatus } from '../../main/protocol.ts';
import type { Dialog, DialogAnswer } from './state/types.ts';

interface TrustDeps {
  client: EngineClient;
  root: string;
  env: Env;
  servers: McpServerStatus[];
  ask: (
    dialog: Extract<Dialog, { kind: 'trust' }> extends infer D ? Omit<D, 'id'> : never,
    fallback: DialogAnswer,
  ) => Promise<DialogAnswer>;
  notice: (level: 'info' | 'warn' | 'error', text: string) => void;
}

/**
 * First use of a repository whose config has untrusted servers: shows what they would run and,
 * if the user agrees, trusts the workspace (as `niffler trust` does) and has the engine reload.
 */
export const offerTrust = async ({
  client,
  root,
  env,
  servers,
  ask,
  notice,
}: TrustDeps): Promise<void> => {
  if (!servers.some((s) => s.state === 'untrusted')) return;
  const result = loadConfig({ root, env });
  if (!result.ok) return;
  const loaded = result.value;
  const pending = loaded.servers
    .filter((s) => s.trust === 'untrusted' || s.trust === 'changed')
    .map((s) => ({ name: s.name, command: describeServer(s.definition) }));
  if (pending.length === 0) return;
  const answer = await ask({ kind: 'trust', servers: pending }, { kind: 'trust', trust: false });
  if (answer.kind !== 'trust' || !answer.trust) {
    notice(
      'info',
      'repository not trusted: its servers stay off (run niffler trust to change that)',
    );
    return;
  }
  trustWorkspace(nifflerPaths(loaded.root, env).trustFile, loaded.root, loaded.gated);
  const reloaded = await client.request('config/reload', {});
  notice(
    reloaded.ok ? 'info' : 'error',
    reloaded.ok
      ? `trusted ${loaded.root}: starting ${pending.map((s) => s.name).join(', ')}`
      : `trusted, but the config did not reload: ${reloaded.error ?? 'unknown error'}`,
  );
};

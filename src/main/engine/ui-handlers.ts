import type { LoadedConfig } from '../extensions/workspace-config.ts';
import { loadConfig } from '../extensions/workspace-config.ts';
import { describeServer } from '../config/redact.ts';
import type { ParamsOf, RequestContext, ResultOf, TrustOffer } from '../protocol.ts';
import { showPart, trustRepository } from '../trust/decide.ts';
import type { Env, NifflerPaths } from '../paths.ts';
import { promptFilesPresent } from './context/prompt.ts';

type UiMethod = 'config/reload' | 'trust/accept';

/** What reloading the config and trusting the repository need of the engine (the `Engine` is one). */
interface UiView {
  reload(): Promise<void>;
  readonly configError: string | null;
  readonly options: { root: string; env?: Env };
  readonly paths: Pick<NifflerPaths, 'trustFile'>;
}

/** What the trust dialog shows when the repository is not trusted; none when it is. */
export const trustOffer = (loaded: LoadedConfig): TrustOffer | undefined => {
  const { trust } = loaded;
  if (trust.level === 'trusted') return undefined;
  const prompts = promptFilesPresent(loaded.root);
  const { parts } = trust.contribution;
  if (parts.length === 0 && prompts.length === 0 && !trust.problem) return undefined;
  return {
    level: trust.level,
    digest: trust.contribution.digest,
    servers: parts
      .filter((p) => p.kind === 'server')
      .map((p) => ({
        name: p.path[0] === 'lsp' ? `lsp.${p.path[1]!}` : p.path[1]!,
        command: describeServer(p.value),
      })),
    // Extension files (agents, commands that run shell, repository tools, tasks) read as settings.
    settings: parts
      .filter((p) => p.kind !== 'server')
      .map((p) => `${p.path.join('.')}: ${showPart(p)}`),
    prompts,
    ...(trust.problem ? { problem: trust.problem } : {}),
  };
};

/** Requests the interactive front-end needs beyond sessions and MCP. */
export const uiHandlers = (
  engine: UiView,
): {
  [M in UiMethod]: (params: ParamsOf<M>, context: RequestContext) => Promise<ResultOf<M>>;
} => ({
  'config/reload': async () => {
    await engine.reload();
    const error = engine.configError;
    return error ? { ok: false, error } : { ok: true };
  },
  'trust/accept': async ({ digest }) => {
    const result = loadConfig({
      root: engine.options.root,
      env: engine.options.env ?? process.env,
    });
    if (!result.ok) return { ok: false, error: result.error.message };
    const { trust } = result.value;
    if (trust.problem) return { ok: false, error: trust.problem };
    if (trust.contribution.digest !== digest)
      return {
        ok: false,
        error:
          "the repository's config changed since it was shown to you; nothing was trusted. Review it again: niffler trust --diff",
      };
    trustRepository(
      engine.paths.trustFile,
      result.value.root,
      trust.contribution,
      engine.options.env,
    );
    await engine.reload();
    return engine.configError ? { ok: false, error: engine.configError } : { ok: true };
  },
});

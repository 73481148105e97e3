import type { RequestContext } from '../daemon/connection.ts';
import type { ParamsOf, ResultOf } from '../protocol.ts';
import type { Engine } from './engine.ts';

type UiMethod = 'config/reload';

/** Requests the interactive front-end needs beyond sessions and MCP. */
export const uiHandlers = (
  engine: Engine,
): {
  [M in UiMethod]: (params: ParamsOf<M>, context: RequestContext) => Promise<ResultOf<M>>;
} => ({
  // After `niffler trust` (or the first-use prompt) the config must be read again: trust.json is not watched.
  'config/reload': async () => {
    await engine.reload();
    const error = engine.configError;
    return error ? { ok: false, error } : { ok: true };
  },
});

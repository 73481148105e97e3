import type { ParamsOf, RequestContext, ResultOf } from '../protocol.ts';
import type { LspService } from './service.ts';

type LspMethod = 'lsp/status';

/** The engine's requests about language servers. */
export const lspHandlers = (
  lsp: () => LspService,
): {
  [M in LspMethod]: (params: ParamsOf<M>, context: RequestContext) => Promise<ResultOf<M>>;
} => ({
  'lsp/status': () => lsp().status(),
});

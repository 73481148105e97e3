import type { GlobalOptions } from '../context.ts';
import { withEngine } from '../engine.ts';
import { showLspStatus } from './lsp-views.ts';

/** `niffler lsp status`: the language servers of this workspace, from the daemon. */
export const lspStatus = (options: GlobalOptions): Promise<void> =>
  withEngine(options, async (client) =>
    showLspStatus(await client.request('lsp/status', {}), options),
  );

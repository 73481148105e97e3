import { NifflerError } from '../../main/errors.ts';
import type { GlobalOptions } from '../context.ts';

/** `niffler` on a terminal: the interactive session. */
export const interactive = async (_options: GlobalOptions): Promise<void> => {
  throw new NifflerError('usage', 'the interactive session is not built yet; use niffler -p "…"');
};

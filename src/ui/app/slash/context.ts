import type { EngineApi as EngineClient } from '../deferred-client.ts';
import type { Env } from '../../../main/paths.ts';
import type { SessionOpened } from '../../../main/protocol.ts';
import type { Action, UiState } from '../state/types.ts';

/** What a slash command's handler may use: the engine, the UI's state, the session. */
export interface SlashContext {
  client: EngineClient;
  root: string;
  env: Env;
  dispatch: (action: Action) => void;
  getState: () => UiState;
  sessionId: () => Promise<string>;
  isBusy: () => boolean;
  open: (
    params: { resume?: string; atTurn?: number; disabled?: string[] },
    note?: string,
  ) => Promise<SessionOpened>;
  setModel: (name: string) => void;
  exit: () => void;
  /** Sends `text` to the engine as a turn (what `/skills NAME request` does). */
  send: (text: string) => Promise<void>;
}

/** A handler's error for arguments it cannot take. */
export const usage = (text: string): never => {
  throw new Error(`usage: ${text}`);
};

import { reducer } from './reducer.ts';
import type { Action, UiState } from './types.ts';

/** The UI state outside React: the controller dispatches, `useSyncExternalStore` reads. */
export const createStore = (initial: UiState) => {
  let state = initial;
  const listeners = new Set<() => void>();
  return {
    getState: (): UiState => state,
    dispatch: (action: Action): void => {
      const next = reducer(state, action);
      if (next === state) return;
      state = next;
      for (const listener of listeners) listener();
    },
    subscribe: (listener: () => void): (() => void) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
};

import { useEffect, useState, useSyncExternalStore } from 'react';
import { createController, type Controller, type ControllerOptions } from '../controller.ts';
import { initialState } from '../state/reducer.ts';
import { createStore } from '../state/store.ts';
import type { UiState } from '../state/types.ts';

export type DaemonOptions = Omit<ControllerOptions, 'dispatch' | 'getState'>;

/**
 * The UI state and the controller that feeds it: daemon events → dispatch, user actions → engine
 * requests. Subscribes on mount (the first frame is already drawn) and lets go on unmount.
 */
export const useDaemon = (options: DaemonOptions): { state: UiState; controller: Controller } => {
  const [{ store, controller }] = useState(() => {
    const created = createStore(initialState(options.root, options.model ?? '...'));
    return {
      store: created,
      controller: createController({
        ...options,
        dispatch: created.dispatch,
        getState: created.getState,
      }),
    };
  });
  const state = useSyncExternalStore(store.subscribe, store.getState);
  useEffect(() => {
    void controller.start();
    return () => controller.dispose();
  }, [controller]);
  return { state, controller };
};

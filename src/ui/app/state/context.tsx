import { createContext, useContext, type ReactNode } from 'react';
import type { Controller } from '../controller.ts';
import type { UiState } from './types.ts';

const StateContext = createContext<UiState | null>(null);
const ActionsContext = createContext<Controller | null>(null);

/** Separate state and actions contexts: components that only act do not re-render on state. */
export const UiProvider = ({
  state,
  actions,
  children,
}: {
  state: UiState;
  actions: Controller;
  children: ReactNode;
}) => (
  <ActionsContext.Provider value={actions}>
    <StateContext.Provider value={state}>{children}</StateContext.Provider>
  </ActionsContext.Provider>
);

export const useUiState = (): UiState => {
  const state = useContext(StateContext);
  if (!state) throw new Error('useUiState outside UiProvider');
  return state;
};

export const useActions = (): Controller => {
  const actions = useContext(ActionsContext);
  if (!actions) throw new Error('useActions outside UiProvider');
  return actions;
};

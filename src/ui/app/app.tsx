import { Box, Static, useWindowSize } from 'ink';
import { Composer } from './components/Composer.tsx';
import { DialogView } from './components/DialogView.tsx';
import { EntryView } from './components/EntryView.tsx';
import { StatusBar } from './components/StatusBar.tsx';
import { TurnIndicator } from './components/TurnIndicator.tsx';
import { useNow } from './hooks/use-now.ts';
import { useComposerKeys, useGlobalKeys } from './hooks/use-keybindings.ts';
import { useActions, useUiState } from './state/context.tsx';
import { isBusy } from './state/reducer.ts';
import type { UiState } from './state/types.ts';

interface AppProps {
  /** Colors and styles in markdown (off with NO_COLOR). */
  color: boolean;
}

// ASCII only: the first frame then skips string-width's Unicode path (~25 ms to set up).
const PLACEHOLDER = 'message, /help, @file, !shell';

/** Layout only: transcript (finished entries printed once), live turn, dialog or input, status bar. */
/** The status line under the input: workspace, model, servers, spend, agent, context. */
const StatusLine = ({ state }: { state: UiState }) => (
  <StatusBar
    workspace={state.workspace}
    model={state.model}
    servers={state.servers}
    totals={state.totals}
    agent={state.agent}
    disabled={state.disabled}
    context={
      state.context ? { used: state.context.use.total, window: state.context.window } : undefined
    }
    {...(state.exitArmed ? { hint: 'press ctrl-c again to exit' } : {})}
  />
);

export const App = ({ color }: AppProps) => {
  const state = useUiState();
  const actions = useActions();
  const { dispatch } = actions;
  const { columns } = useWindowSize();
  const width = Math.max(20, columns);
  const dialog = state.dialogs[0];
  const now = useNow(isBusy(state));
  const { editor, suggestions } = useComposerKeys(
    actions,
    state.workspace,
    !dialog,
    state.offers,
    state.extensions.commands,
    state.extensions.skills,
  );
  useGlobalKeys(actions, {
    inputEmpty: editor.text === '',
    dialogOpen: Boolean(dialog),
    exitArmed: state.exitArmed,
    setExitArmed: (armed) => dispatch({ type: 'exit-armed', armed }),
    toggleExpanded: () => dispatch({ type: 'toggle-expanded' }),
  });
  const view = { width, color, expanded: state.expanded, now };
  const toolRunning = state.live.some((e) => e.kind === 'tool' && e.status === 'running');
  return (
    <>
      <Static items={state.committed}>
        {(entry) => (
          <Box key={entry.id} width={width}>
            <EntryView entry={entry} {...view} />
          </Box>
        )}
      </Static>
      <Box flexDirection="column" width={width}>
        {state.live.map((entry) => (
          <EntryView key={entry.id} entry={entry} {...view} />
        ))}
        {state.turn && !dialog && !toolRunning ? (
          <TurnIndicator turn={state.turn} elapsedMs={now - state.turn.startedAt} />
        ) : null}
        {dialog ? (
          <DialogView dialog={dialog} onAnswer={actions.answer} />
        ) : (
          <Composer
            editor={editor}
            suggestions={suggestions}
            placeholder={PLACEHOLDER}
            color={color}
          />
        )}
        <StatusLine state={state} />
      </Box>
    </>
  );
};

import { render } from 'ink';
import { preloadMarkdown } from './markdown.ts';
import { App } from './app.tsx';
import { useDaemon, type DaemonOptions } from './hooks/use-daemon.ts';
import { UiProvider } from './state/context.tsx';

const Root = ({ options, color }: { options: DaemonOptions; color: boolean }) => {
  const { state, controller } = useDaemon(options);
  return (
    <UiProvider state={state} actions={controller}>
      <App color={color} />
    </UiProvider>
  );
};

/**
 * Draws the interactive session on the terminal and resolves when the user leaves. Returns the
 * session id, so the caller can say how to resume it.
 */
export const runApp = async (options: Omit<DaemonOptions, 'exit'>): Promise<string> => {
  const color = !process.env['NO_COLOR'] && process.env['TERM'] !== 'dumb';
  let exit: () => void = () => {};
  let sessionId = '';
  const instance = render(
    <Root
      options={{ ...options, exit: () => exit(), onSession: (id) => (sessionId = id) }}
      color={color}
    />,
    {
      exitOnCtrlC: false,
      patchConsole: false,
    },
  );
  exit = () => instance.unmount();
  // After the first frame: the markdown renderer is the heaviest module of the UI.
  setImmediate(() => void preloadMarkdown());
  await instance.waitUntilExit();
  return sessionId;
};

import { render } from 'ink';
import { mark } from '../../workers/shared/timeline.ts';
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
  // The markdown renderer, the heaviest module of the UI (~100 ms of loading that holds this
  // thread), loads once the session is open: loaded after the first frame, it held back the
  // daemon's answers to the session's opening by as much. A prompt waits for it (controller.ts);
  // a reply before it is there shows as plain text and loads it.
  const onSession = (id: string) => {
    sessionId = id;
    setImmediate(() => void preloadMarkdown());
  };
  const instance = render(
    <Root options={{ ...options, exit: () => exit(), onSession }} color={color} />,
    {
      exitOnCtrlC: false,
      patchConsole: false,
    },
  );
  // Ink drew the first frame within render(): React commits the first tree synchronously.
  mark('first frame drawn');
  exit = () => instance.unmount();
  await instance.waitUntilExit();
  return sessionId;
};

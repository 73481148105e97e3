import { Text } from 'ink';
import { render } from 'ink-testing-library';
import { describe, expect, it, vi } from 'vitest';
import type { Controller } from '../../../src/ui/app/controller.ts';
import { useComposerKeys } from '../../../src/ui/app/hooks/use-keybindings.ts';

// The input box's keys, on Ink's own input handling. A terminal sends keys typed ahead while the
// front-end was busy in one go: each must act on the editor the key before it left.

const Composer = ({ actions }: { actions: Controller }) => {
  const { editor } = useComposerKeys(actions, '/', true);
  return <Text>[{editor.text}]</Text>;
};

const controller = () => {
  const submit = vi.fn(async (_text: string) => {});
  const actions = {
    history: [] as string[],
    submit,
    cycleAgent: async () => {},
    complete: async () => [],
  } as unknown as Controller;
  return { actions, submit };
};

describe('the input box, keys read in one go', () => {
  it("Tab completes what was typed just before it, not the last frame's text", async () => {
    const { actions } = controller();
    const view = render(<Composer actions={actions} />);
    // Two reads before any render: the text, then Tab.
    view.stdin.write('/he');
    view.stdin.write('\t');
    await vi.waitFor(() => expect(view.lastFrame()).toBe('[/help ]'));
  });

  it('Enter sends what was typed just before it', async () => {
    const { actions, submit } = controller();
    const view = render(<Composer actions={actions} />);
    view.stdin.write('hello there');
    view.stdin.write('\r');
    await vi.waitFor(() => expect(submit).toHaveBeenCalledWith('hello there'));
    await vi.waitFor(() => expect(view.lastFrame()).toBe('[]'));
  });
});

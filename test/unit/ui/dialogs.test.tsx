import { render } from 'ink-testing-library';
import { describe, expect, it, vi } from 'vitest';
import { ElicitationForm } from '../../../src/ui/app/components/ElicitationForm.tsx';
import { SamplingDialog } from '../../../src/ui/app/components/SamplingDialog.tsx';
import { TrustDialog } from '../../../src/ui/app/components/TrustDialog.tsx';

const row = (text: string) => `│ ${text.padEnd(96)} │`;
const box = (lines: string[]) =>
  [`╭${'─'.repeat(98)}╮`, ...lines.map(row), `╰${'─'.repeat(98)}╯`].join('\n');

const elicitation = {
  message: 'Who are you?',
  requestedSchema: {
    type: 'object',
    properties: {
      name: { type: 'string', title: 'Name', default: 'Ada' },
      age: { type: 'integer', title: 'Age' },
      color: { type: 'string', enum: ['red', 'green'] },
    },
    required: ['name', 'age'],
  },
};

describe('ElicitationForm', () => {
  it('builds the form from the schema with defaults filled', () => {
    const frame = render(
      <ElicitationForm server="everything" elicitation={elicitation} onAnswer={() => {}} />,
    ).lastFrame();
    expect(frame).toBe(
      box([
        'everything asks: Who are you?',
        '',
        '› Name*: Ada▏',
        '  Age*: ',
        '  color: red',
        'Enter: next / send · Tab ↑ ↓: move · ← → space: choose · Esc: decline',
      ]),
    );
  });

  it('edits, refuses a missing required value, then sends the content', async () => {
    const onAnswer = vi.fn();
    const view = render(
      <ElicitationForm server="everything" elicitation={elicitation} onAnswer={onAnswer} />,
    );
    view.stdin.write('\r'); // Name keeps its default → Age
    await vi.waitFor(() => expect(view.lastFrame()).toContain('› Age*:'));
    view.stdin.write('\t'); // → color, Age still empty
    await vi.waitFor(() => expect(view.lastFrame()).toContain('› color: ‹ red ›'));
    view.stdin.write(' ');
    await vi.waitFor(() => expect(view.lastFrame()).toContain('‹ green ›'));
    view.stdin.write('\r');
    await vi.waitFor(() => expect(view.lastFrame()).toContain('Age is required'));
    view.stdin.write('\u001b[A');
    await vi.waitFor(() => expect(view.lastFrame()).toContain('› Age*:'));
    view.stdin.write('42');
    await vi.waitFor(() => expect(view.lastFrame()).toContain('Age*: 42'));
    view.stdin.write('\r');
    await vi.waitFor(() => expect(view.lastFrame()).toContain('› color'));
    view.stdin.write('\r');
    await vi.waitFor(() =>
      expect(onAnswer).toHaveBeenCalledWith({
        action: 'accept',
        content: { name: 'Ada', age: 42, color: 'green' },
      }),
    );
  });
});

describe('SamplingDialog and TrustDialog', () => {
  it('asks to approve a sampling request', async () => {
    const onAnswer = vi.fn();
    const view = render(
      <SamplingDialog
        server="everything"
        summary="user: say hi"
        maxTokens={100}
        onAnswer={onAnswer}
      />,
    );
    expect(view.lastFrame()).toBe(
      box([
        'everything asks to use the model (up to 100 tokens)',
        'user: say hi',
        '',
        '› 1. Allow (y)',
        '  2. Decline (n)',
      ]),
    );
    view.stdin.write('n');
    await vi.waitFor(() => expect(onAnswer).toHaveBeenCalledWith(false));
  });

  it('shows what an untrusted repository would run', async () => {
    const onAnswer = vi.fn();
    const view = render(
      <TrustDialog
        offer={{
          level: 'untrusted',
          digest: 'd',
          servers: [{ name: 'memory', command: 'node server.js' }],
          settings: ['tools.policy.bash: "allow"'],
          prompts: ['AGENTS.md'],
        }}
        onAnswer={onAnswer}
      />,
    );
    expect(view.lastFrame()).toBe(
      box([
        'Trust this repository?',
        'server memory: node server.js',
        'setting tools.policy.bash: "allow"',
        'prompt files for the model: AGENTS.md',
        'Same as niffler trust; any change to these asks again (niffler trust --diff).',
        '',
        '› 1. Trust it: start its servers, use its settings and prompt files (y)',
        '  2. Not now (none of it is used) (n)',
      ]),
    );
    view.stdin.write('\r');
    await vi.waitFor(() => expect(onAnswer).toHaveBeenCalledWith(true));
  });
});

import { render } from 'ink-testing-library';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { preloadMarkdown } from '../../../src/ui/app/markdown.ts';
import type { ApprovalAnswer, ApprovalAsk } from '../../../src/main/protocol.ts';
import { ApprovalDialog } from '../../../src/ui/app/components/ApprovalDialog.tsx';
import { Composer } from '../../../src/ui/app/components/Composer.tsx';
import { EntryView } from '../../../src/ui/app/components/EntryView.tsx';
import { AssistantMessage } from '../../../src/ui/app/components/MessageView.tsx';
import { StatusBar } from '../../../src/ui/app/components/StatusBar.tsx';
import { ToolCallView } from '../../../src/ui/app/components/ToolCallView.tsx';
import { card, server } from './fixtures.ts';

// The renderer loads in the background in the app; here it must be there for exact frames.
beforeAll(() => preloadMarkdown());

const totals = { inputTokens: 1234, outputTokens: 56, costUsd: 0.0042, turns: 1 };

describe('AssistantMessage', () => {
  it('renders a streamed message as it grows, as markdown', () => {
    const view = render(<AssistantMessage text="Hello, " reasoning="" width={60} color={false} />);
    expect(view.lastFrame()).toBe('● Hello,');
    view.rerender(
      <AssistantMessage text="Hello, **world**" reasoning="" width={60} color={false} />,
    );
    expect(view.lastFrame()).toBe('● Hello, world');
    view.rerender(
      <AssistantMessage
        text={'Hello, **world**\n\n- one\n- two\n\n```js\nconst a = 1;\n```'}
        reasoning=""
        width={60}
        color={false}
      />,
    );
    expect(view.lastFrame()).toBe('● Hello, world\n\n    * one\n    * two\n\n    const a = 1;');
  });

  it('collapses reasoning to one dimmed line, and shows it all when expanded', () => {
    const props = {
      text: 'Answer',
      reasoning: 'first I look, then I answer',
      width: 60,
      color: false,
    };
    expect(render(<AssistantMessage {...props} />).lastFrame()).toBe(
      '✻ Thinking (6 words; ctrl-o to expand)\n● Answer',
    );
    expect(render(<AssistantMessage {...props} expanded />).lastFrame()).toBe(
      '✻ first I look, then I answer\n● Answer',
    );
  });
});

describe('ToolCallView', () => {
  it.each([
    ['running', card(), 1234, '⠋ echo (everything) message: "hi" · 1.2s'],
    [
      'running with progress',
      card({ progress: '2/5 copying' }),
      1234,
      '⠋ echo (everything) message: "hi" · 1.2s\n  ⎿ 2/5 copying',
    ],
    [
      'done',
      card({ status: 'done', ms: 12, summary: 'Echo: hi', detail: 'Echo: hi' }),
      0,
      '✓ echo (everything) message: "hi" · 12ms\n  ⎿ Echo: hi',
    ],
    [
      'error',
      card({ status: 'error', ms: 40, summary: 'server-crashed: the server exited' }),
      0,
      '✗ echo (everything) message: "hi" · 40ms\n  ⎿ server-crashed: the server exited',
    ],
    [
      'denied',
      card({ status: 'denied', summary: 'the user denied it' }),
      0,
      '⊘ echo (everything) message: "hi" · denied\n  ⎿ the user denied it',
    ],
    [
      'built-in, no server',
      card({
        name: 'read_file',
        server: undefined,
        args: { path: 'a.ts' },
        status: 'done',
        ms: 3,
        summary: 'line 1 (+2 lines)',
      }),
      0,
      '✓ read_file path: "a.ts" · 3ms\n  ⎿ line 1 (+2 lines)',
    ],
  ])('%s', (_name, value, elapsed, frame) => {
    expect(render(<ToolCallView card={value} elapsedMs={elapsed} />).lastFrame()).toBe(frame);
  });

  it("says in red what an edit's change brought, and leaves it to the full result when expanded", () => {
    const value = card({
      status: 'done',
      ms: 5,
      summary: 'a (+2 lines)',
      detail: 'a\nx.ts:1:1 error TS1: a',
      problem: '1 new error: x.ts:1:1 error TS1: a',
    });
    expect(render(<ToolCallView card={value} />).lastFrame()).toBe(
      '✓ echo (everything) message: "hi" · 5ms\n  ⎿ a (+2 lines)\n  ⎿ 1 new error: x.ts:1:1 error TS1: a',
    );
    expect(render(<ToolCallView card={value} expanded />).lastFrame()).toBe(
      '✓ echo (everything) message: "hi" · 5ms\n  ⎿ a\n    x.ts:1:1 error TS1: a',
    );
  });

  it('expands to the full result', () => {
    const value = card({ status: 'done', ms: 5, summary: 'a (+1 lines)', detail: 'a\nb' });
    expect(render(<ToolCallView card={value} expanded />).lastFrame()).toBe(
      '✓ echo (everything) message: "hi" · 5ms\n  ⎿ a\n    b',
    );
  });
});

const ask: ApprovalAsk = {
  sessionId: 's1',
  callId: 'c1',
  tool: 'files__write',
  server: 'files',
  args: { path: 'notes.txt', content: 'hello' },
  readOnly: false,
  destructive: true,
  reason: 'MCP tools ask unless read-only',
};

describe('ApprovalDialog', () => {
  const width = 100;
  const row = (text: string) => `│ ${text.padEnd(width - 4)} │`;

  it('shows tool, server, annotations, arguments and the four answers', () => {
    const frame = render(<ApprovalDialog ask={ask} onAnswer={() => {}} />).lastFrame();
    expect(frame).toBe(
      [
        `╭${'─'.repeat(width - 2)}╮`,
        row('Allow write from files?'),
        row('may change things · destructive · MCP tools ask unless read-only'),
        row(''),
        row('path: notes.txt'),
        row('content: hello'),
        row(''),
        row('› 1. Allow once (y)'),
        row('  2. Allow for this session (s)'),
        row('  3. Always allow in this repository (a)'),
        row('  4. Deny (n)'),
        `╰${'─'.repeat(width - 2)}╯`,
      ].join('\n'),
    );
  });

  it.each<[string, string, ApprovalAnswer]>([
    ['y', 'y', 'once'],
    ['s', 's', 'session'],
    ['a', 'a', 'repo'],
    ['n', 'n', 'deny'],
    ['3', '3', 'repo'],
    ['↓ then Enter', '\u001b[B', 'session'],
  ])('%s answers', async (_name, keys, answer) => {
    const onAnswer = vi.fn();
    const view = render(<ApprovalDialog ask={ask} onAnswer={onAnswer} />);
    view.stdin.write(keys);
    if (keys.startsWith('\u001b')) {
      await vi.waitFor(() => expect(view.lastFrame()).toContain('› 2. Allow for this session'));
      view.stdin.write('\r');
    }
    await vi.waitFor(() => expect(onAnswer).toHaveBeenCalledWith(answer));
  });
});

describe('StatusBar', () => {
  it('shows workspace, model, servers ready/total, tokens and cost', () => {
    const frame = render(
      <StatusBar
        workspace="/home/me/repo"
        model="fake"
        servers={[server('a', 'ready'), server('b', 'ready')]}
        totals={totals}
      />,
    ).lastFrame();
    expect(frame).toBe(`${'repo | fake | MCP 2/2 | 1.2k in / 56 out | $0.0042'.padEnd(95)}/help`);
  });

  it('names failed servers and counts untrusted ones; disabled ones are not counted', () => {
    const servers = [
      server('a', 'ready'),
      server('b', 'failed'),
      server('c', 'untrusted'),
      server('d', 'disabled'),
    ];
    const frame = render(
      <StatusBar
        workspace="/r/w"
        model="m"
        servers={servers}
        totals={{ ...totals, costUsd: 0 }}
        hint="press ctrl-c again to exit"
      />,
    ).lastFrame();
    expect(frame).toBe(
      `${'w | m | MCP 1/3 (b failed) (1 untrusted) | 1.2k in / 56 out'.padEnd(74)}press ctrl-c again to exit`,
    );
  });
});

describe('StatusBar, servers not ready', () => {
  it('names the servers still starting or waiting for a login (a retry will have their tools), at most three', () => {
    const frame = (servers: ReturnType<typeof server>[]) =>
      render(
        <StatusBar
          workspace="/r/w"
          model="m"
          servers={servers}
          totals={{ ...totals, costUsd: 0 }}
        />,
      ).lastFrame();
    expect(
      frame([server('a', 'ready'), server('gh', 'starting'), server('jira', 'needs-auth')]),
    ).toBe(`${'w | m | MCP 1/3 (gh, jira not ready) | 1.2k in / 56 out'.padEnd(95)}/help`);
    const many = ['s1', 's2', 's3', 's4', 's5'].map((n) => server(n, 'starting'));
    expect(frame(many)).toContain('MCP 0/5 (s1, s2, s3 +2 not ready)');
  });
});

describe('EntryView', () => {
  const view = { width: 80, color: false, expanded: false, now: 0 };
  it.each([
    [
      'an error',
      {
        kind: 'notice' as const,
        id: 'e1',
        level: 'error' as const,
        text: 'llm-http: 500 from the model',
      },
      '✗ llm-http: 500 from the model',
    ],
    [
      'a warning',
      { kind: 'notice' as const, id: 'e1', level: 'warn' as const, text: 'cancelled' },
      '! cancelled',
    ],
    [
      'a user message with a file',
      { kind: 'user' as const, id: 'e1', text: 'look at @a.ts', attachments: ['a.ts'] },
      '\n> look at @a.ts\n  + a.ts',
    ],
    [
      'a shell command',
      {
        kind: 'shell' as const,
        id: 'e1',
        command: 'echo hi',
        output: 'hi\n',
        exitCode: 0,
        running: false,
      },
      '\n! echo hi\nhi',
    ],
    [
      'a failed shell command',
      {
        kind: 'shell' as const,
        id: 'e1',
        command: 'false',
        output: '',
        exitCode: 1,
        running: false,
      },
      '\n! false (exit 1)',
    ],
  ])('%s', (_name, entry, frame) => {
    expect(render(<EntryView entry={entry} {...view} />).lastFrame()).toBe(frame);
  });
});

describe('Composer', () => {
  it('shows the placeholder, then lines with the cursor, and completions', () => {
    const line = (text: string) => `│ ${text.padEnd(96)} │`;
    const top = `╭${'─'.repeat(98)}╮`;
    const bottom = `╰${'─'.repeat(98)}╯`;
    expect(
      render(
        <Composer editor={{ text: '', cursor: 0 }} suggestions={[]} placeholder="message" />,
      ).lastFrame(),
    ).toBe([top, line('>  message'), bottom].join('\n'));
    expect(
      render(<Composer editor={{ text: 'one\ntwo', cursor: 7 }} suggestions={[]} />).lastFrame(),
    ).toBe([top, line('> one'), line('  two'), bottom].join('\n'));
    expect(
      render(
        <Composer editor={{ text: '/m', cursor: 2 }} suggestions={['/mcp', '/model']} />,
      ).lastFrame(),
    ).toBe([top, line('> /m'), bottom, '  /mcp  /model'].join('\n'));
  });

  it('draws the cursor as text without colour (NO_COLOR)', () => {
    const line = (text: string) => `│ ${text.padEnd(96)} │`;
    const frame = (text: string, cursor: number) =>
      render(<Composer editor={{ text, cursor }} suggestions={[]} color={false} />)
        .lastFrame()!
        .split('\n')[1];
    expect(frame('abc', 3)).toBe(line('> abc_'));
    expect(frame('abc', 1)).toBe(line('> a|bc'));
  });
});

import { describe, expect, it } from 'vitest';
import type { SessionEvent, TurnSummary } from '../../../src/main/protocol.ts';
import { initialState, isBusy, reducer } from '../../../src/ui/app/state/reducer.ts';
import { entriesFromMessages } from '../../../src/ui/app/state/history.ts';
import type { Action, UiState } from '../../../src/ui/app/state/types.ts';
import { server } from './fixtures.ts';

const ev = (event: SessionEvent, now = 1000): Action => ({ type: 'session-event', event, now });
const summary = (extra: Partial<TurnSummary> = {}): TurnSummary => ({
  outcome: 'answered',
  text: '',
  usage: { inputTokens: 10, outputTokens: 5 },
  steps: 1,
  denied: [],
  ...extra,
});
const submit: Action = { type: 'submit', text: 'hi', attachments: [], now: 500 };
const run = (actions: Action[], from: UiState = initialState('/w/repo', 'fake')) =>
  actions.reduce(reducer, from);
const strip = (state: UiState) => ({
  committed: state.committed.map(({ id: _id, ...rest }) => rest),
  live: state.live.map(({ id: _id, ...rest }) => rest),
});

describe('reducer: daemon events → UI state', () => {
  it.each<[string, Action[], Partial<ReturnType<typeof strip>>]>([
    [
      'text deltas stream into one assistant entry',
      [submit, ev({ type: 'text', text: 'Hel' }), ev({ type: 'text', text: 'lo' })],
      {
        committed: [],
        live: [
          { kind: 'user', text: 'hi', attachments: [] },
          { kind: 'assistant', text: 'Hello', reasoning: '' },
        ],
      },
    ],
    [
      'reasoning, then text, share an entry',
      [submit, ev({ type: 'reasoning', text: 'think' }), ev({ type: 'text', text: 'ok' })],
      {
        live: [
          { kind: 'user', text: 'hi', attachments: [] },
          { kind: 'assistant', text: 'ok', reasoning: 'think' },
        ],
      },
    ],
    [
      'text after a tool call starts a new entry',
      [
        submit,
        ev({ type: 'text', text: 'a' }),
        ev({ type: 'tool-call', id: 'c1', name: 'read_file', args: { path: 'x' } }, 1000),
        ev({ type: 'text', text: 'b' }),
      ],
      {
        live: [
          { kind: 'user', text: 'hi', attachments: [] },
          { kind: 'assistant', text: 'a', reasoning: '' },
          {
            kind: 'tool',
            callId: 'c1',
            name: 'read_file',
            args: { path: 'x' },
            status: 'running',
            startedAt: 1000,
          },
          { kind: 'assistant', text: 'b', reasoning: '' },
        ],
      },
    ],
    [
      'progress of a running call shows on its card',
      [
        submit,
        ev({ type: 'tool-call', id: 'c1', name: 'slow', server: 'ev', args: {} }),
        ev({ type: 'tool-progress', id: 'c1', progress: 2, total: 5, message: 'copying' }),
      ],
      {
        live: [
          { kind: 'user', text: 'hi', attachments: [] },
          {
            kind: 'tool',
            callId: 'c1',
            name: 'slow',
            server: 'ev',
            args: {},
            status: 'running',
            startedAt: 1000,
            progress: '2/5 copying',
          },
        ],
      },
    ],
    [
      'a tool result completes its card with a one-line summary',
      [
        submit,
        ev({ type: 'tool-call', id: 'c1', name: 'echo', server: 'ev', args: {} }),
        ev({
          type: 'tool-result',
          id: 'c1',
          name: 'echo',
          result: { ok: true, output: 'one\ntwo' },
          ms: 12.4,
        }),
      ],
      {
        live: [
          { kind: 'user', text: 'hi', attachments: [] },
          {
            kind: 'tool',
            callId: 'c1',
            name: 'echo',
            server: 'ev',
            args: {},
            status: 'done',
            startedAt: 1000,
            ms: 12,
            summary: 'one (+1 lines)',
            detail: 'one\ntwo',
          },
        ],
      },
    ],
    [
      "an edit whose change brought errors says how many and the first, in the card's problem",
      [
        submit,
        ev({ type: 'tool-call', id: 'c1', name: 'edit_file', args: {} }),
        ev({
          type: 'tool-result',
          id: 'c1',
          name: 'edit_file',
          result: {
            ok: true,
            output:
              '--- a/x.ts\n+++ b/x.ts\n\n[typescript] 2 new errors in x.ts:\nx.ts:1:1 error TS1: a\nx.ts:2:1 error TS2: b',
            data: {
              path: 'x.ts',
              diagnostics: {
                errors: 2,
                warnings: 0,
                lines: ['x.ts:1:1 error TS1: a', 'x.ts:2:1 error TS2: b'],
              },
            },
          },
          ms: 40,
        }),
      ],
      {
        live: [
          { kind: 'user', text: 'hi', attachments: [] },
          {
            kind: 'tool',
            callId: 'c1',
            name: 'edit_file',
            args: {},
            status: 'done',
            startedAt: 1000,
            ms: 40,
            summary: '--- a/x.ts (+4 lines)',
            detail:
              '--- a/x.ts\n+++ b/x.ts\n\n[typescript] 2 new errors in x.ts:\nx.ts:1:1 error TS1: a\nx.ts:2:1 error TS2: b',
            problem: '2 new errors: x.ts:1:1 error TS1: a',
          },
        ],
      },
    ],
    [
      'a failed tool result marks the card as an error',
      [
        submit,
        ev({ type: 'tool-call', id: 'c1', name: 'echo', args: {} }),
        ev({
          type: 'tool-result',
          id: 'c1',
          name: 'echo',
          result: { ok: false, error: { code: 'timeout', message: 'no answer in 30s' } },
          ms: 30000,
        }),
      ],
      {
        live: [
          { kind: 'user', text: 'hi', attachments: [] },
          {
            kind: 'tool',
            callId: 'c1',
            name: 'echo',
            args: {},
            status: 'error',
            startedAt: 1000,
            ms: 30000,
            summary: 'timeout: no answer in 30s',
            detail: 'no answer in 30s',
          },
        ],
      },
    ],
    [
      'a denied call keeps its reason when the failed result follows',
      [
        submit,
        ev({ type: 'tool-call', id: 'c1', name: 'bash', args: {} }, 1000),
        ev({ type: 'tool-denied', id: 'c1', name: 'bash', reason: 'the user denied it' }, 1500),
        ev({
          type: 'tool-result',
          id: 'c1',
          name: 'bash',
          result: { ok: false, error: { code: 'denied', message: 'not run' } },
          ms: 0,
        }),
      ],
      {
        live: [
          { kind: 'user', text: 'hi', attachments: [] },
          {
            kind: 'tool',
            callId: 'c1',
            name: 'bash',
            args: {},
            status: 'denied',
            startedAt: 1000,
            ms: 0,
            summary: 'the user denied it',
            detail: 'not run',
          },
        ],
      },
    ],
    [
      'the finished turn moves into the transcript',
      [
        submit,
        ev({ type: 'text', text: 'done' }),
        ev({ type: 'turn-end', summary: summary() }),
        { type: 'turn-finished', summary: summary() },
      ],
      {
        committed: [
          { kind: 'user', text: 'hi', attachments: [] },
          { kind: 'assistant', text: 'done', reasoning: '' },
        ],
        live: [],
      },
    ],
    [
      'a cancelled turn says so; running cards end as cancelled',
      [
        submit,
        ev({ type: 'tool-call', id: 'c1', name: 'slow', args: {} }),
        ev({ type: 'turn-end', summary: summary({ outcome: 'cancelled' }) }),
        { type: 'turn-finished', summary: null },
      ],
      {
        committed: [
          { kind: 'user', text: 'hi', attachments: [] },
          {
            kind: 'tool',
            callId: 'c1',
            name: 'slow',
            args: {},
            status: 'error',
            startedAt: 1000,
            summary: 'cancelled',
          },
          { kind: 'notice', level: 'warn', text: 'cancelled' },
        ],
      },
    ],
    [
      "an error turn turns the engine's warning red instead of repeating it",
      [
        submit,
        ev({ type: 'notice', level: 'warn', text: 'llm-http: 500' }),
        ev({ type: 'turn-end', summary: summary({ outcome: 'error', error: 'llm-http: 500' }) }),
      ],
      {
        live: [
          { kind: 'user', text: 'hi', attachments: [] },
          { kind: 'notice', level: 'error', text: 'llm-http: 500' },
        ],
      },
    ],
    [
      'a request that failed adds its error',
      [submit, { type: 'turn-finished', summary: null, error: 'the daemon closed the connection' }],
      {
        committed: [
          { kind: 'user', text: 'hi', attachments: [] },
          { kind: 'notice', level: 'error', text: 'the daemon closed the connection' },
        ],
      },
    ],
    [
      'retries show as warnings',
      [submit, ev({ type: 'retry', attempt: 2, delayMs: 1500, reason: '429 from the model' })],
      {
        live: [
          { kind: 'user', text: 'hi', attachments: [] },
          { kind: 'notice', level: 'warn', text: '429 from the model; retry 2 in 1.5s' },
        ],
      },
    ],
    [
      'command output while idle goes straight to the transcript',
      [{ type: 'output', title: 'Help', text: '…' }],
      { committed: [{ kind: 'output', title: 'Help', text: '…' }], live: [] },
    ],
    [
      'a shell command is live until it ends',
      [{ type: 'shell-start', command: 'ls' }],
      {
        committed: [],
        live: [{ kind: 'shell', command: 'ls', output: '', exitCode: null, running: true }],
      },
    ],
    [
      'an ended shell command is committed',
      [
        { type: 'shell-start', command: 'ls' },
        { type: 'shell-end', output: 'a\n', exitCode: 0 },
      ],
      {
        committed: [{ kind: 'shell', command: 'ls', output: 'a\n', exitCode: 0, running: false }],
        live: [],
      },
    ],
  ])('%s', (_name, actions, expected) => {
    expect(strip(run(actions))).toMatchObject(expected);
  });

  it('adds up tokens and cost per turn', () => {
    const end = ev({ type: 'turn-end', summary: summary({ costUsd: 0.5 }) });
    const state = run([submit, end, { type: 'turn-finished', summary: summary() }, submit, end]);
    expect(state.totals).toEqual({ inputTokens: 20, outputTokens: 10, costUsd: 1, turns: 2 });
  });

  it('counts from what an opened session has spent, and starts again for another', () => {
    const opened = (sessionId: string, turns: number, tokens: number, costUsd: number): Action => ({
      type: 'session-opened',
      sessionId,
      model: 'fake',
      history: [],
      spent: { turns, usage: { inputTokens: tokens, outputTokens: tokens / 2 }, costUsd },
    });
    const end = ev({ type: 'turn-end', summary: summary({ costUsd: 0.5 }) });
    const state = run([opened('s1', 3, 100, 2), submit, end]);
    expect(state.totals).toEqual({ inputTokens: 110, outputTokens: 55, costUsd: 2.5, turns: 4 });
    expect(run([opened('s1', 3, 100, 2), submit, end, opened('s2', 0, 0, 0)]).totals).toEqual({
      inputTokens: 0,
      outputTokens: 0,
      costUsd: 0,
      turns: 0,
    });
  });

  it('notes the servers a prompt waits for, until they leave starting', () => {
    const starting = run([
      { type: 'servers', servers: [server('a', 'starting'), server('b', 'ready')] },
      submit,
    ]);
    expect(starting.turn).toEqual({ startedAt: 500, started: false, waitingFor: ['a'] });
    const ready = reducer(starting, { type: 'server-status', status: server('a', 'ready') });
    expect(ready.turn?.waitingFor).toEqual([]);
    expect(ready.servers.map((s) => s.state)).toEqual(['ready', 'ready']);
    const started = reducer(starting, ev({ type: 'turn-start', turn: 1, model: 'other' }));
    expect(started.turn).toMatchObject({ started: true, waitingFor: [] });
    expect(started.model).toBe('other');
  });

  it('queues dialogs and closes them by id', () => {
    const ask = {
      sessionId: 's',
      callId: 'c',
      tool: 't',
      args: {},
      readOnly: false,
      destructive: false,
      reason: 'r',
    };
    const state = run([
      { type: 'dialog-open', dialog: { kind: 'approval', id: 'd1', ask } },
      {
        type: 'dialog-open',
        dialog: { kind: 'sampling', id: 'd2', server: 's', summary: 'x', maxTokens: 10 },
      },
      { type: 'dialog-close', id: 'd1' },
    ]);
    expect(state.dialogs.map((d) => d.id)).toEqual(['d2']);
  });

  it('gives every entry a unique id', () => {
    const state = run([
      { type: 'notice', level: 'info', text: 'a' },
      submit,
      ev({ type: 'text', text: 'x' }),
      ev({ type: 'tool-call', id: 'c', name: 'n', args: {} }),
      { type: 'turn-finished', summary: null },
    ]);
    const ids = state.committed.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('is pure: the previous state is not changed', () => {
    const before = run([submit, ev({ type: 'text', text: 'a' })]);
    const snapshot = structuredClone(before);
    reducer(before, ev({ type: 'text', text: 'b' }));
    expect(before).toEqual(snapshot);
  });

  it('shows a resumed session: tool calls paired with their results', () => {
    const history = entriesFromMessages([
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'read a' },
      {
        role: 'assistant',
        content: '',
        toolCalls: [{ id: 'c1', name: 'read_file', args: { path: 'a' } }],
      },
      { role: 'tool', toolCallId: 'c1', name: 'read_file', result: { ok: true, output: 'A' } },
      { role: 'assistant', content: 'It says A.' },
    ]);
    const state = run([
      {
        type: 'session-opened',
        sessionId: 's1',
        model: 'fake',
        history,
        spent: { turns: 1, usage: { inputTokens: 0, outputTokens: 0 }, costUsd: 0 },
        note: 'resumed s1',
      },
    ]);
    expect(strip(state).committed).toEqual([
      { kind: 'user', text: 'read a', attachments: [] },
      {
        kind: 'tool',
        callId: 'c1',
        name: 'read_file',
        args: { path: 'a' },
        status: 'done',
        startedAt: 0,
        summary: 'A',
        detail: 'A',
      },
      { kind: 'assistant', text: 'It says A.', reasoning: '' },
      { kind: 'divider', text: 'resumed s1' },
    ]);
    expect(state.sessionId).toBe('s1');
  });
});

describe('isBusy', () => {
  it('is true while a turn or a shell command runs', () => {
    expect(isBusy(run([]))).toBe(false);
    expect(isBusy(run([submit]))).toBe(true);
    expect(isBusy(run([submit, { type: 'turn-finished', summary: summary() }]))).toBe(false);
    expect(isBusy(run([{ type: 'shell-start', command: 'ls' }]))).toBe(true);
    expect(
      isBusy(
        run([
          { type: 'shell-start', command: 'ls' },
          { type: 'shell-end', output: '', exitCode: 0 },
        ]),
      ),
    ).toBe(false);
  });
});

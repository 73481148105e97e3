import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it } from 'vitest';
import { mcpStatusTable, sessionsTable } from '../../../src/ui/commands/status-views.ts';
import { formatTable } from '../../../src/ui/render/output.ts';
import { server } from './fixtures.ts';

describe('formatTable', () => {
  it('pads by visible width, so colored cells line up with plain ones', () => {
    const green = (text: string) => `\u001b[32m${text}\u001b[39m`;
    const table = formatTable(
      ['NAME', 'STATE', 'PID'],
      [
        ['a', green('ready'), '1'],
        ['bb', 'stopped', '-'],
      ],
    );
    expect(stripVTControlCharacters(table)).toBe(
      ['NAME  STATE    PID', 'a     ready    1', 'bb    stopped  -'].join('\n'),
    );
  });
});

describe('mcpStatusTable', () => {
  const now = 1_000_000;
  const servers = [
    server('up', 'ready', {
      pid: 42,
      startedAt: now - 65_000,
      tools: 3,
      p50Ms: 12,
      protocolVersion: '2025-11-25',
    }),
    server('down', 'stopped', {
      startedAt: now - 65_000,
      restarts: 1,
      sandbox: 'bwrap',
      limits: { memoryMB: 256 },
    }),
    server('broken', 'failed', {
      startedAt: now - 5_000,
      lastError: { message: 'spawn failed\n    at stack frame', at: now },
    }),
  ];

  it('shows uptime only for running servers and only the first line of the last error', () => {
    expect(mcpStatusTable(servers, { now })).toBe(
      [
        'NAME    STATE    PROTOCOL    PID  UPTIME  RESTARTS  TOOLS  CALLS  ERRORS  P50   P95  SANDBOX       LAST ERROR',
        'up      ready    2025-11-25  42   1m 05s  0         3      0      0       12ms  -    -',
        'down    stopped  -           -    -       1         0      0      0       -     -    bwrap+limits',
        'broken  failed   -           -    -       0         0      0      0       -     -    -             spawn failed',
      ].join('\n'),
    );
  });

  it('shows the columns asked for, in that order, with the same cells', () => {
    expect(
      mcpStatusTable(servers, { now, columns: ['NAME', 'TOOLS', 'UPTIME', 'LAST ERROR'] }),
    ).toBe(
      [
        'NAME    TOOLS  UPTIME  LAST ERROR',
        'up      3      1m 05s',
        'down    0      -',
        'broken  0      -       spawn failed',
      ].join('\n'),
    );
  });

  it('cuts a long last error with an ellipsis', () => {
    const long = server('x', 'degraded', { lastError: { message: 'e'.repeat(100), at: now } });
    const cell = mcpStatusTable([long], { now, columns: ['LAST ERROR'] }).split('\n')[1]!;
    expect(cell).toBe(`${'e'.repeat(59)}…`);
  });
});

describe('sessionsTable', () => {
  it('shows the minute a session changed and cuts long titles', () => {
    expect(
      sessionsTable([
        { id: 's1', updatedAt: '2025-01-02T03:04:05.678Z', messages: 4, title: 't'.repeat(70) },
      ]),
    ).toBe(
      [
        'ID  UPDATED           MESSAGES  TITLE',
        `s1  2025-01-02 03:04  4         ${'t'.repeat(49)}…`,
      ].join('\n'),
    );
  });
});

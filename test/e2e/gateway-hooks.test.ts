import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { stdioConsumer, textOf } from './gateway.ts';
import { makeE2eWorkspace } from './workspace.ts';

// A gateway client's call takes a session's path from the hooks on: the user's PreToolUse hooks
// can refuse it, and PostToolUse hooks see its result (built binary, real daemon).

describe('a gateway client meets the user’s hooks', () => {
  it('the guard hook (exit 2) refuses bash with its reason, though the client is allowed bash; PostToolUse adds to a result', async () => {
    const ws = makeE2eWorkspace();
    ws.writeGlobal(
      [
        'hooks:',
        '  PreToolUse:',
        '    - matcher: Bash',
        '      hooks:',
        '        - type: command',
        `          command: "echo 'no bash from anyone' >&2; exit 2"`,
        '  PostToolUse:',
        '    - matcher: Read',
        '      hooks:',
        '        - type: command',
        `          command: "echo '{\\"additionalContext\\": \\"checked by the post hook\\"}'"`,
        'serve:',
        '  clients:',
        '    guarded:',
        '      policy:',
        '        bash: allow',
        '',
      ].join('\n'),
    );
    writeFileSync(path.join(ws.repo, 'a.txt'), 'alpha\n');
    const client = await stdioConsumer(ws, { name: 'guarded' });
    const refused = await client.callTool({ name: 'bash', arguments: { command: 'touch pwned' } });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain('a PreToolUse hook blocked it: no bash from anyone');
    expect(existsSync(path.join(ws.repo, 'pwned'))).toBe(false);
    const read = await client.callTool({ name: 'read_file', arguments: { path: 'a.txt' } });
    expect(read.isError).toBeFalsy();
    expect(textOf(read)).toContain('alpha');
    expect(textOf(read)).toContain('checked by the post hook');
  });
});

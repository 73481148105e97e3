import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { completeSlash, helpText, isBuiltinSlash, runSlash } from '../../../src/ui/app/commands.ts';
import type { SlashContext } from '../../../src/ui/app/slash/context.ts';
import { initialState } from '../../../src/ui/app/state/reducer.ts';

/**
 * A context that records every way a command can act (a request to the engine, an action, a
 * session opened, a turn sent, the exit); the engine refuses every request.
 */
const recordingContext = (root: string) => {
  const did: string[] = [];
  const ctx: SlashContext = {
    client: {
      request: (method: string) => {
        did.push(method);
        return Promise.reject(new Error(`no engine here (${method})`));
      },
    } as unknown as SlashContext['client'],
    root,
    env: { NIFFLER_HOME: path.join(root, 'home') },
    dispatch: (action) => did.push(action.type),
    getState: () => initialState(root, 'fake'),
    sessionId: () => Promise.resolve('s1'),
    isBusy: () => false,
    open: () => {
      did.push('open');
      return Promise.reject(new Error('no engine here (open)'));
    },
    setModel: () => did.push('set-model'),
    exit: () => did.push('exit'),
    send: () => {
      did.push('send');
      return Promise.resolve();
    },
  };
  return { ctx, did };
};

/** The names `/help` lists under Commands. */
const helpNames = (): string[] => {
  const section = helpText().split('\n\nKeys')[0]!;
  return [...section.matchAll(/^ {2}\/(\S+)/gm)].map((m) => m[1]!);
};

describe('the slash command table', () => {
  it('help and completion list exactly the commands dispatch runs, each once', async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'nf-slash-'));
    onTestFinished(() => rmSync(root, { recursive: true, force: true }));
    const completed = completeSlash('/').map((c) => c.slice(1));
    expect(new Set(completed).size).toBe(completed.length);
    expect(helpNames()).toEqual(completed);
    expect(completed.length).toBeGreaterThan(10);
    for (const name of completed) {
      const { ctx, did } = recordingContext(root);
      const error = await runSlash(name, [], ctx).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(String(error), `/${name}`).not.toMatch(/unknown command/);
      // It did something: asked the engine, showed something, opened, sent or left.
      expect(did.length, `/${name}`).toBeGreaterThan(0);
      expect(isBuiltinSlash(name)).toBe(true);
    }
  });

  it('answers to its aliases without listing them, and refuses a name it does not have', async () => {
    const { ctx, did } = recordingContext(os.tmpdir());
    await runSlash('?', [], ctx);
    await runSlash('quit', [], ctx);
    expect(did).toEqual(['output', 'exit']);
    expect(helpNames()).not.toContain('?');
    expect(completeSlash('/q')).toEqual([]);
    await expect(runSlash('nonesuch', [], ctx)).rejects.toThrow(
      'unknown command /nonesuch; /help lists the commands',
    );
    expect(isBuiltinSlash('nonesuch')).toBe(false);
  });

  it('refuses a command that changes the session while a turn runs, before it acts', async () => {
    const { ctx, did } = recordingContext(os.tmpdir());
    const busy = { ...ctx, isBusy: () => true };
    for (const name of ['clear', 'resume', 'undo', 'compact'])
      await expect(runSlash(name, [], busy)).rejects.toThrow(
        `/${name} waits until the running turn ends (Esc cancels it)`,
      );
    expect(did).toEqual([]);
  });

  it('sends /skills NAME request to the engine as the line typed', async () => {
    const { ctx, did } = recordingContext(os.tmpdir());
    const sent: string[] = [];
    await runSlash(
      'skills',
      ['pdf', 'make', 'a', 'deck'],
      {
        ...ctx,
        send: (text) => {
          sent.push(text);
          return Promise.resolve();
        },
      },
      '/skills pdf  make a deck',
    );
    expect(sent).toEqual(['/skills pdf  make a deck']);
    expect(did).toEqual([]);
  });
});

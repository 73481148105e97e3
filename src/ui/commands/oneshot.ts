import { readFileSync } from 'node:fs';
import { loadOffers } from '../app/mcp-input.ts';
import { attachMentions } from '../attach.ts';
import type { GlobalOptions } from '../context.ts';
import { withEngine } from '../engine.ts';
import { NifflerError } from '../../main/errors.ts';
import { findWorkspace } from '../../main/paths.ts';
import { info, warn } from '../render/output.ts';
import { createJsonRenderer, createPlainRenderer, exitCodeForOutcome } from '../render/turn.ts';

interface OneShotOptions extends GlobalOptions {
  prompt?: string | boolean;
  continue?: boolean;
  resume?: string;
  atTurn?: number;
}

/** The prompt from `-p TEXT`, or stdin when `-p` has no text or stdin is piped. */
const readPrompt = (options: OneShotOptions): string => {
  const given = typeof options.prompt === 'string' ? options.prompt : '';
  const piped = !process.stdin.isTTY ? readStdin() : '';
  const text = [given, piped].filter((t) => t.trim()).join('\n\n');
  if (!text.trim())
    throw new NifflerError(
      'usage',
      'no prompt: give one with -p "…" or on stdin (echo "…" | niffler -p)',
    );
  return text;
};

const readStdin = (): string => {
  try {
    return readFileSync(0, 'utf8');
  } catch {
    return '';
  }
};

/**
 * `niffler -p "prompt"`: runs one turn; the answer streams to stdout, tool activity to stderr.
 * Tools that need approval are denied unless `--yes` or the policy allows them. Ctrl-C cancels.
 */
export const oneShot = async (options: OneShotOptions): Promise<void> => {
  const text = readPrompt(options);
  await withEngine(options, async (client) => {
    const opened = await client.request('session/open', {
      ...(options.resume ? { resume: options.resume } : {}),
      ...(options.atTurn !== undefined ? { atTurn: options.atTurn } : {}),
      ...(options.continue ? { continue: true } : {}),
      ...(options.agent ? { agent: options.agent } : {}),
    });
    for (const message of opened.warnings) warn(message);
    const workspace = findWorkspace(options.cwd ?? process.cwd());
    const message = await attachMentions(client, workspace.root, text, () => loadOffers(client));
    for (const problem of message.problems) warn(problem);
    if (message.attachments.length && !options.json)
      info(`attached ${message.attachments.join(', ')}`);
    const renderer = options.json ? createJsonRenderer(opened.sessionId) : createPlainRenderer();
    if (!options.json && process.stderr.isTTY) info(`session ${opened.sessionId}`);
    const off = client.onNotification('session/event', ({ sessionId, event }) => {
      if (sessionId === opened.sessionId) renderer.event(event);
    });
    client.onRequest('elicitation/ask', async () => ({
      action: 'decline',
      reason: 'one-shot mode',
    }));
    const controller = new AbortController();
    const onSigint = () => controller.abort();
    process.once('SIGINT', onSigint);
    try {
      const summary = await client
        .request(
          'session/prompt',
          {
            sessionId: opened.sessionId,
            text: message.body,
            interactive: false,
            cwd: workspace.searched[0],
            ...(options.yes ? { yes: true } : {}),
            ...(options.model ? { model: options.model } : {}),
          },
          controller.signal,
        )
        .catch((error: unknown) => {
          if (controller.signal.aborted)
            return {
              outcome: 'cancelled' as const,
              text: '',
              usage: { inputTokens: 0, outputTokens: 0 },
              steps: 0,
              denied: [],
            };
          throw error;
        });
      renderer.end(summary);
      process.exitCode = exitCodeForOutcome(summary);
    } finally {
      off();
      process.off('SIGINT', onSigint);
    }
  });
};

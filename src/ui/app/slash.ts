import { helpText } from './commands.ts';
import type { SlashContext } from './slash/context.ts';
import { lspView, mcp, tools, trace } from './slash/servers.ts';
import { contextView, cost, resume, sessions, undo } from './slash/sessions.ts';
import { agent, config, model, skills } from './slash/settings.ts';

/** Runs one slash command; throws with a message for the transcript when it fails. */
export const runSlash = async (name: string, args: string[], ctx: SlashContext): Promise<void> => {
  const busy = () => {
    if (ctx.isBusy())
      throw new Error(`/${name} waits until the running turn ends (Esc cancels it)`);
  };
  switch (name) {
    case 'help':
    case '?':
      return ctx.dispatch({
        type: 'output',
        title: 'Help',
        text: helpText(ctx.getState().extensions.commands),
      });
    case 'mcp':
      return mcp(ctx, args);
    case 'lsp':
      return lspView(ctx);
    case 'tools':
      return tools(ctx, args);
    case 'agent':
      return agent(ctx, args);
    case 'model':
      return model(ctx, args);
    case 'skills':
      return skills(ctx);
    case 'clear':
      busy();
      await ctx.open({ disabled: ctx.getState().disabled }, 'new session');
      return;
    case 'sessions':
      return sessions(ctx);
    case 'resume':
      busy();
      return resume(ctx, args);
    case 'context':
      return await contextView(ctx);
    case 'undo':
      busy();
      return undo(ctx, args);
    case 'compact': {
      busy();
      const focus = args.join(' ').trim();
      const { notes } = await ctx.client.request('session/compact', {
        sessionId: await ctx.sessionId(),
        ...(focus ? { focus } : {}),
      });
      return ctx.dispatch({ type: 'output', title: 'Compact', text: notes.join('\n') });
    }
    case 'cost':
      return cost(ctx);
    case 'config':
      return config(ctx);
    case 'trace':
      return trace(ctx, args);
    case 'exit':
    case 'quit':
      return ctx.exit();
    default:
      throw new Error(`unknown command /${name}; /help lists the commands`);
  }
};

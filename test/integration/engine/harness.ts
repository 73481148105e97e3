import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { onTestFinished } from 'vitest';
import { connectSocket, type EngineClient } from '../../../src/main/daemon/client.ts';
import { startInProcess } from '../../../src/main/daemon/in-process.ts';
import { runDaemon } from '../../../src/main/daemon/server.ts';
import { nifflerPaths } from '../../../src/main/paths.ts';
import type {
  ApprovalAnswer,
  PromptParams,
  SessionEvent,
  TurnSummary,
} from '../../../src/main/protocol.ts';
import { startFakeLlm, type FakeLlm, type FakeLlmOptions } from '../../fixtures/fake-llm/server.ts';
import { testEnv } from '../../fixtures/env.ts';
import { serverBin } from '../../fixtures/mcp/servers.ts';

/**
 * How the harness reaches its engine: in this process, over a socket to a daemon served in this
 * process, or (`binary`) over the socket of the daemon the built binary starts (`npm test` builds
 * it first), as a user's front-end does.
 */
export type CarrierName = 'in-process' | 'socket' | 'binary';

export const carriers: CarrierName[] = ['in-process', 'socket'];

export interface Harness {
  root: string;
  home: string;
  llm: FakeLlm;
  client: EngineClient;
  events: SessionEvent[];
  approvals: { tool: string; destructive: boolean; reason: string }[];
  /** How the front-end answers approval requests. */
  answer: (tool: string) => ApprovalAnswer | Promise<ApprovalAnswer>;
  open(params?: { resume?: string; continue?: boolean }): Promise<string>;
  prompt(
    sessionId: string,
    text: string,
    extra?: Partial<PromptParams>,
    signal?: AbortSignal,
  ): Promise<TurnSummary>;
  file(name: string, text: string): string;
}

/**
 * A workspace (temp HOME and repo) whose model is the fake LLM (OpenAI wire format) and whose MCP
 * servers are real processes, with the engine reached over the chosen carrier.
 */
export const startHarness = async (
  carrier: CarrierName,
  options: {
    config?: string;
    mcp?: string;
    llm?: FakeLlmOptions;
    /** Lines of the `fake` model's entry (and any models after it), or a function of the fake's URL. */
    model?: string | ((url: string) => string);
  } = {},
): Promise<Harness> => {
  const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'nf-t-')));
  const root = path.join(base, 'repo');
  const home = path.join(base, 'h');
  mkdirSync(path.join(root, '.git'), { recursive: true });
  mkdirSync(home, { recursive: true });
  const llm = await startFakeLlm(options.llm);
  const mcp =
    options.mcp ??
    `  everything:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(serverBin('server-everything'))}, stdio]\n`;
  writeFileSync(
    path.join(home, 'config.yaml'),
    `model: fake\nmodels:\n  fake:\n    provider: openai\n    baseUrl: ${llm.url}/v1\n    model: fake-model\n${(typeof options.model === 'function' ? options.model(llm.url) : options.model) ?? '    toolProtocol: native\n'}    prices: { input: 1, output: 2 }\nmcpServers:\n${mcp}${options.config ?? ''}`,
  );
  const env = testEnv({ HOME: base, NIFFLER_HOME: home });
  let client: EngineClient;
  let close: () => Promise<void>;
  if (carrier === 'in-process') {
    const engine = await startInProcess({ root, env });
    client = engine.client;
    close = engine.close;
  } else if (carrier === 'binary') {
    // `mcp status` starts the workspace's daemon (detached) and answers once it serves.
    await execa(process.execPath, [path.resolve('dist/cli.cjs'), 'mcp', 'status'], {
      cwd: root,
      env,
      extendEnv: false,
      stdin: 'ignore',
    });
    client = await connectSocket(nifflerPaths(root, env).socket);
    close = async () => {
      client.close();
      // Returns once the daemon and its servers have ended.
      await execa(process.execPath, [path.resolve('dist/cli.cjs'), 'daemon', 'stop'], {
        cwd: root,
        env,
        extendEnv: false,
        stdin: 'ignore',
        reject: false,
      });
    };
  } else {
    let listening: () => void = () => {};
    const ready = new Promise<void>((resolve) => (listening = resolve));
    const running = runDaemon({ root, env, onListening: () => listening() });
    await ready;
    client = await connectSocket(nifflerPaths(root, env).socket);
    close = async () => {
      await client.request('daemon/stop', {}).catch(() => undefined);
      client.close();
      await running;
    };
  }
  onTestFinished(async () => {
    await close();
    await llm.close();
    rmSync(base, { recursive: true, force: true });
  });
  const harness: Harness = {
    root,
    home,
    llm,
    client,
    events: [],
    approvals: [],
    answer: () => 'once',
    open: async (params = {}) => (await client.request('session/open', params)).sessionId,
    prompt: (sessionId, text, extra = {}, signal) =>
      client.request('session/prompt', { sessionId, text, interactive: true, ...extra }, signal),
    file: (name, text) => {
      const file = path.join(root, name);
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, text);
      return file;
    },
  };
  client.onNotification('session/event', ({ event }) => harness.events.push(event));
  client.onRequest('approval/ask', async (params) => {
    harness.approvals.push({
      tool: params.tool,
      destructive: params.destructive,
      reason: params.reason,
    });
    return { answer: await harness.answer(params.tool) };
  });
  await client.request('mcp/status', { wait: true });
  return harness;
};

/** The `tool` messages of a recorded OpenAI request. */
export const toolMessages = (body: {
  messages: { role: string; content: unknown; tool_call_id?: string }[];
}) => body.messages.filter((m) => m.role === 'tool');

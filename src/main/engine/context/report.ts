import { existsSync } from 'node:fs';
import type { ChatMessage } from '../../../workers/protocol/api.ts';
import type { TranscriptEntry } from '../transcript.ts';
import { clearedFiles, lastSummary, type CompactionMarker } from './compaction.ts';
import { budgetOf, type RequestView } from './ladder.ts';
import type { PromptPart } from './prompt.ts';
import { TOOL_SEARCH, type ToolPlan } from './tool-search.ts';
import { messageTokens, type Calibration } from './tokens.ts';
import type { ContextPart, ContextReport, WindowSource } from '../../protocol.ts';

// What `/context` and `niffler sessions show ID --context` say: the next request of a session,
// part by part, in tokens (the model's count as niffler expects it); the compactions made; the
// files holding cleared outputs.

export type { ContextReport } from '../../protocol.ts';

interface ReportInput {
  sessionId: string;
  agent: string;
  model: string;
  window: { tokens: number; source: WindowSource };
  reserve: number;
  threshold: number | false;
  calibration: Calibration;
  prompt: readonly PromptPart[];
  view: RequestView;
  plan: ToolPlan;
  history: readonly ChatMessage[];
  markers: readonly CompactionMarker[];
  entries: readonly TranscriptEntry[];
}

const PROMPT_PART_NAMES: Record<PromptPart['kind'], string> = {
  niffler: 'system prompt',
  agent: 'agent prompt',
  file: 'instruction file',
  server: 'server instructions',
  hooks: 'hook context',
  skills: 'skills offered',
  git: 'git context',
};

/** A compaction marker in words. */
const describeMarker = (marker: CompactionMarker): string => {
  const parts: string[] = [];
  if (marker.cleared.length) parts.push(`cleared ${marker.cleared.length} tool output(s)`);
  if (marker.summary !== undefined) {
    const n = marker.summarizedTurns ?? 0;
    const turns = `the first ${n} turn(s)`;
    const steps = marker.summarizedSteps
      ? ` and ${marker.summarizedSteps} message(s) of turn ${n + 1}'s earlier steps`
      : '';
    const by = marker.outline
      ? `outlined by niffler (${marker.outline})`
      : marker.summary
        ? 'summarized'
        : 'left out (no room for a summary)';
    parts.push(
      `${turns}${steps} ${by}, ${Math.ceil(marker.summary.length / 4).toLocaleString('en-US')} tokens`,
    );
  }
  return parts.join('; ') || 'nothing';
};

const promptParts = (input: ReportInput, scale: number): ContextPart[] =>
  input.prompt.map((p) => ({
    kind: 'system',
    name: p.kind === 'niffler' ? p.name : `${PROMPT_PART_NAMES[p.kind]}: ${p.name}`,
    tokens: Math.round((p.chars / 4) * scale),
    ...(p.note ? { note: p.note } : {}),
  }));

const toolParts = (input: ReportInput, scale: number): ContextPart[] => {
  const whole = input.plan.offered.filter((t) => t.name !== TOOL_SEARCH);
  const search = input.plan.offered.find((t) => t.name === TOOL_SEARCH);
  const tokens = (specs: unknown[]) => Math.round((JSON.stringify(specs).length / 4) * scale);
  return [
    { kind: 'tools', name: `tool definitions (${whole.length} sent whole)`, tokens: tokens(whole) },
    ...(search
      ? [
          {
            kind: 'tools' as const,
            name: `tool_search (${input.plan.deferred.length} tools behind it)`,
            tokens: tokens([search]),
            note: 'deferred tools are loaded by the model when it searches for them',
          },
        ]
      : []),
  ];
};

const conversationParts = (input: ReportInput): ContextPart[] => {
  const { view, history } = input;
  const users = view.messages.filter((m) => m.role === 'user').length;
  const all = history.filter((m) => m.role === 'user').length;
  const cleared = clearedFiles(input.markers);
  const stubs = view.messages.filter((m) => m.role === 'tool' && cleared.has(m.toolCallId)).length;
  const outputs = view.messages.filter((m) => m.role === 'tool').length;
  const summary = lastSummary(input.markers);
  return [
    ...(view.use.summary
      ? [
          {
            kind: 'summary' as const,
            name: `summary of ${summary?.summarizedTurns ?? 0} earlier turn(s)${summary?.summarizedSteps ? ' and steps' : ''}`,
            tokens: view.use.summary,
            ...(summary?.outline ? { note: `an outline by niffler: ${summary.outline}` } : {}),
          },
        ]
      : []),
    {
      kind: 'conversation',
      name: `messages of ${users} turn(s) kept of ${all}`,
      tokens: view.use.messages,
    },
    {
      kind: 'conversation',
      name: `tool outputs (${outputs})`,
      tokens: view.use.toolOutputs,
      ...(stubs ? { note: `${stubs} cleared to a stub naming the file that holds it` } : {}),
    },
  ];
};

/** The report of a session's next request. */
export const contextReport = (input: ReportInput): ContextReport => {
  const scale = input.calibration.scale;
  const { limit, start } = budgetOf({
    window: input.window.tokens,
    reserve: input.reserve,
    threshold: input.threshold,
  });
  const outputs = new Map(
    input.history.flatMap((m) => (m.role === 'tool' ? [[m.toolCallId, m] as const] : [])),
  );
  return {
    sessionId: input.sessionId,
    agent: input.agent,
    model: input.model,
    window: input.window.tokens,
    windowSource: input.window.source,
    reserve: input.reserve,
    limit,
    threshold: input.threshold === false ? null : start,
    scale: Math.round(scale * 100) / 100,
    calibrated: input.calibration.calibrated,
    parts: [...promptParts(input, scale), ...toolParts(input, scale), ...conversationParts(input)],
    total: input.view.use.total,
    compactions: input.entries.flatMap((e) =>
      e.type === 'compaction'
        ? [{ turn: e.turn, time: e.time, what: describeMarker(e.marker) }]
        : [],
    ),
    clearedOutputs: [...clearedFiles(input.markers)].map(([id, file]) => {
      const output = outputs.get(id);
      return {
        id,
        tool: output?.name ?? '?',
        file,
        tokens: output ? Math.round(messageTokens(output) * scale) : 0,
        exists: existsSync(file),
      };
    }),
  };
};

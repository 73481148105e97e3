import { describe, expect, it } from 'vitest';
import { ContextKeeper, type FitOptions } from '../../../src/main/engine/context/keeper.ts';
import { budgetOf } from '../../../src/main/engine/context/ladder.ts';
import type { SummaryModel } from '../../../src/main/engine/context/summary.ts';
import {
  Calibration,
  countInOverflow,
  estimateText,
  UNCALIBRATED_SCALE,
} from '../../../src/main/engine/context/tokens.ts';
import type { ChatMessage } from '../../../src/workers/protocol/api.ts';

/** `n` turns, each: a question of `ask` chars, a read of `read` chars, an answer of `answer` chars. */
const turns = (n: number, ask = 400, read = 6000, answer = 2000, from = 0): ChatMessage[] =>
  Array.from({ length: n }, (_, k): ChatMessage[] => {
    const t = k + from;
    return [
      { role: 'user', content: `question ${t} ${'q'.repeat(ask)}` },
      {
        role: 'assistant',
        content: '',
        toolCalls: [{ id: `c${t}`, name: 'read_file', args: { path: `f${t}` } }],
      },
      {
        role: 'tool',
        toolCallId: `c${t}`,
        name: 'read_file',
        result: { ok: true, output: `file ${t} ${'r'.repeat(read)}` },
      },
      { role: 'assistant', content: `answer ${t} ${'a'.repeat(answer)}` },
    ];
  }).flat();

/** A turn still running: its user message and `steps` steps, each a call and a large result. */
const running = (steps: number, ask = 400, read = 6000): ChatMessage[] => [
  { role: 'user', content: `now ${'n'.repeat(ask)}` },
  ...Array.from({ length: steps }, (_, s): ChatMessage[] => [
    {
      role: 'assistant',
      content: `step ${s}`,
      toolCalls: [{ id: `s${s}`, name: 'grep', args: { pattern: `p${s}` } }],
    },
    {
      role: 'tool',
      toolCallId: `s${s}`,
      name: 'grep',
      result: { ok: true, output: `found ${s} ${'g'.repeat(read)}` },
    },
  ]).flat(),
];

/** A summary model answering `answer` (or failing), recording what it was asked. */
const summarizer = (answer: string | Error, window = 16_000) => {
  const asked: { chars: number; maxTokens: number }[] = [];
  const model: SummaryModel = {
    window,
    scale: 1,
    ask: async (request, maxTokens) => {
      asked.push({ chars: JSON.stringify(request).length, maxTokens });
      if (answer instanceof Error) throw answer;
      return answer;
    },
  };
  return { model, asked };
};

const keeper = () => new ContextKeeper({ saveOutput: (id) => `/o/${id}` });

const calibrated = (scale = 1) => {
  const c = new Calibration();
  c.learnCount(1000, 1000 * scale);
  return c;
};

const options = (over: Partial<FitOptions> = {}): FitOptions => ({
  window: 16_000,
  reserve: 4000,
  threshold: 0.8,
  calibration: calibrated(),
  summarizer: summarizer('Goals: read the files. State: done.').model,
  signal: new AbortController().signal,
  ...over,
});

const input = (history: ChatMessage[], system = 'sys', tools: FitOptions[] = []) => ({
  history,
  system,
  instructionChars: 0,
  tools: tools as never[],
});

/** Every call in `messages` is followed by its results, and every result has its call. */
const paired = (messages: ChatMessage[]): boolean => {
  const calls = messages.flatMap((m) =>
    m.role === 'assistant' ? (m.toolCalls ?? []).map((c) => c.id) : [],
  );
  const results = messages.flatMap((m) => (m.role === 'tool' ? [m.toolCallId] : []));
  return JSON.stringify(calls) === JSON.stringify(results);
};

describe('fitting a request to the window: a guarantee', () => {
  it("the issue's case: a protected tail and a large newest turn that do not fit together — the tail shrinks instead of failing", async () => {
    // Each turn ~2.1k tokens; the newest one is large. The old keeper gave up here.
    const history = [...turns(3, 8000, 400, 8000), ...running(0, 8000)];
    const k = keeper();
    const fitted = await k.fit(input(history), options());
    const { limit } = budgetOf(options());
    expect(fitted.use.total).toBeLessThanOrEqual(limit);
    expect(fitted.messages[0]).toMatchObject({ role: 'user' });
    expect(paired(fitted.messages)).toBe(true);
    expect(fitted.messages.at(-1)).toEqual(history.at(-1));
    expect(fitted.compactions.some((m) => m.summary !== undefined)).toBe(true);
  });

  it("clears the newest turn's earlier tool outputs before summarizing any of its steps", async () => {
    const history = [...turns(1, 100, 100, 100), ...running(4, 100, 14_000)];
    const k = keeper();
    const fitted = await k.fit(input(history), options({ threshold: false }));
    expect(fitted.use.total).toBeLessThanOrEqual(budgetOf(options()).limit);
    const cleared = fitted.compactions.flatMap((m) => m.cleared.map((c) => c.id));
    expect(cleared.length).toBeGreaterThan(0);
    expect(cleared).not.toContain('s3');
    expect(fitted.compactions.some((m) => m.summarizedSteps)).toBe(false);
    // The last step's output is whole.
    expect(JSON.stringify(fitted.messages.at(-1))).toContain('found 3');
    expect(fitted.notes.join('\n')).toMatch(/tool output\(s\) of this turn's earlier steps/);
    expect(paired(fitted.messages)).toBe(true);
  });

  it("summarizes the newest turn's earlier steps when clearing is not enough, the summary bounded by the room left", async () => {
    // Many steps whose calls and texts (not outputs) fill the window.
    const history: ChatMessage[] = [{ role: 'user', content: 'refactor everything' }];
    for (let s = 0; s < 40; s++)
      history.push(
        {
          role: 'assistant',
          content: `step ${s} ${'t'.repeat(1200)}`,
          toolCalls: [{ id: `e${s}`, name: 'edit_file', args: { path: `f${s}`, text: 'x' } }],
        },
        {
          role: 'tool',
          toolCallId: `e${s}`,
          name: 'edit_file',
          result: { ok: true, output: 'ok' },
        },
      );
    const { model, asked } = summarizer('s'.repeat(40_000));
    const k = keeper();
    const fitted = await k.fit(input(history), options({ threshold: false, summarizer: model }));
    expect(fitted.use.total).toBeLessThanOrEqual(budgetOf(options()).limit);
    const marker = fitted.compactions.find((m) => m.summarizedSteps)!;
    expect(marker.summarizedTurns).toBe(0);
    expect(fitted.messages[0]).toEqual(history[0]);
    expect(fitted.messages[1]).toMatchObject({ role: 'assistant' });
    expect(paired(fitted.messages)).toBe(true);
    // The model's too-long answer was cut to the bound (at most 10 % of the window).
    expect(estimateText(marker.summary!)).toBeLessThanOrEqual(1600);
    expect(marker.summary).toContain('[cut to fit the context window]');
    expect(asked.length).toBeGreaterThan(0);
  });

  it('clears even the last step of the turn, then summarizes all its steps, keeping only the user message', async () => {
    const history = running(1, 200, 60_000);
    const k = keeper();
    const fitted = await k.fit(input(history), options({ threshold: false }));
    expect(fitted.use.total).toBeLessThanOrEqual(budgetOf(options()).limit);
    expect(fitted.compactions.flatMap((m) => m.cleared.map((c) => c.id))).toEqual(['s0']);
    expect(paired(fitted.messages)).toBe(true);
  });

  it('fails only when the newest user message alone cannot fit, saying by how much and what to do', async () => {
    const history = [...turns(2), { role: 'user' as const, content: 'p'.repeat(80_000) }];
    const k = keeper();
    const error = await k
      .fit(input(history), options({ model: 'local' }))
      .catch((e: Error) => e.message);
    expect(error).toMatch(
      /your message is too large for the model's context window: about 20,00\d tokens/,
    );
    expect(error).toMatch(/about [\d,]+ too many/);
    expect(error).toContain('cut the pasted text (by about');
    expect(error).toContain('models.local.contextWindow');
    expect(error).toContain('/compact cannot make room');
    // Nothing was compacted for it: no step could have helped.
    expect(k.markers).toEqual([]);
  });

  it('says clearly when even the system prompt and tools do not fit, and how to go on', async () => {
    const tools = [{ name: 'big', description: 'x'.repeat(60_000), inputSchema: {} }];
    await expect(
      keeper().fit(
        { history: turns(1, 10, 10, 10), system: 'sys', instructionChars: 0, tools },
        options(),
      ),
    ).rejects.toThrow(
      /system prompt and tool definitions alone .* switch servers off .*tools\.search: always.* larger window/,
    );
  });

  it('every request of a long session fits, at 8k, 16k and 200k, whatever the turn sizes', async () => {
    for (const window of [8000, 16_000, 200_000]) {
      const k = keeper();
      const history: ChatMessage[] = [];
      const reserve = Math.floor(window / 4);
      const { limit } = budgetOf({ window, reserve, threshold: 0.8 });
      for (let t = 0; t < 40; t++) {
        const size = ((t * 7919) % 13) * 900;
        history.push(...turns(1, size % 5000, size, 1200, t));
        const fitted = await k.fit(
          input(history),
          options({ window, reserve, summarizer: summarizer('Goals: x.', window).model }),
        );
        expect(fitted.use.total, `window ${window}, turn ${t}`).toBeLessThanOrEqual(limit);
        expect(paired(fitted.messages)).toBe(true);
        expect(fitted.messages[0]).toMatchObject({ role: 'user' });
      }
    }
  });
});

describe('summaries, bounded and never depended on', () => {
  const long = () => [...turns(8, 4000, 1000, 4000), ...running(0)];

  it('a summary model that answers with nothing: niffler outlines the turns instead, and says so', async () => {
    const k = keeper();
    const fitted = await k.fit(input(long()), options({ summarizer: summarizer('  ').model }));
    const marker = fitted.compactions.find((m) => m.summary !== undefined)!;
    expect(marker.outline).toBe(
      'the summary model failed: the summary model answered with nothing',
    );
    expect(marker.summary).toContain('Outline of earlier turns by niffler');
    expect(marker.summary).toContain('- user: question 0');
    expect(marker.summary).toContain('called read_file {"path":"f0"}');
    expect(fitted.notes.join('\n')).toMatch(
      /outlined by niffler instead of summarized .* \/compact asks the model again/,
    );
  });

  it('a summary model that fails or is down: the outline stands in, the request fits', async () => {
    const down = new Error('connect ECONNREFUSED 127.0.0.1:9\nmore');
    const k = keeper();
    const fitted = await k.fit(input(long()), options({ summarizer: summarizer(down).model }));
    expect(fitted.use.total).toBeLessThanOrEqual(budgetOf(options()).limit);
    expect(fitted.compactions.find((m) => m.outline)?.outline).toBe(
      'the summary model failed: connect ECONNREFUSED 127.0.0.1:9',
    );
  });

  it('a summary longer than what it replaces is cut to its bound', async () => {
    const k = keeper();
    const fitted = await k.fit(
      input(long()),
      options({ summarizer: summarizer('y'.repeat(100_000)).model }),
    );
    const marker = fitted.compactions.find((m) => m.summary !== undefined)!;
    expect(estimateText(marker.summary!)).toBeLessThanOrEqual(1600);
    expect(fitted.use.total).toBeLessThanOrEqual(budgetOf(options()).limit);
  });

  it("every summary request fits the summary model's own window, the conversation in chunks", async () => {
    const { model, asked } = summarizer('Goals: x.', 8000);
    const k = keeper();
    // A 200k-token history summarized by an 8k model.
    await k.fit(input([...turns(60, 8000, 100, 8000), ...running(0)]), {
      ...options({ window: 200_000, reserve: 8000, summarizer: model }),
    });
    expect(asked.length).toBeGreaterThan(5);
    for (const { chars, maxTokens } of asked)
      expect(Math.ceil(chars / 4) + maxTokens).toBeLessThanOrEqual(8000);
  });

  it('/compact with a focus passes it on; a cancelled turn stops the summary, recording nothing', async () => {
    const controller = new AbortController();
    const k = keeper();
    const model: SummaryModel = {
      window: 16_000,
      scale: 1,
      ask: async () => {
        controller.abort();
        throw new Error('aborted');
      },
    };
    await expect(
      k.fit(input(long()), options({ summarizer: model, signal: controller.signal })),
    ).rejects.toThrow('aborted');
    expect(k.markers.filter((m) => m.summary !== undefined)).toEqual([]);
  });
});

describe('token accounting', () => {
  it('a model not heard from yet is assumed to count 1.4 times the estimate; a report calibrates it', () => {
    const c = new Calibration();
    expect(c.scale).toBe(UNCALIBRATED_SCALE);
    expect(c.calibrated).toBe(false);
    c.learn(1000, { inputTokens: 0, outputTokens: 0 });
    expect(c.calibrated).toBe(false);
    c.learn(1000, { inputTokens: 1500, outputTokens: 3 });
    expect(c.scale).toBe(1.5);
    expect(c.calibrated).toBe(true);
    c.learn(1000, { inputTokens: 90_000, outputTokens: 3 });
    expect(c.scale).toBe(3);
  });

  it("reads the provider's count from its refusal of a request over the window", () => {
    expect(
      countInOverflow(
        "This model's maximum context length is 16000 tokens. However, your messages resulted in 17311 tokens. Please reduce the length of the messages.",
      ),
    ).toBe(17311);
    expect(
      countInOverflow(
        "This model's maximum context length is 1536 tokens. However, your request has 4176 input tokens. Please reduce the length of the input messages.",
      ),
    ).toBe(4176);
    expect(
      countInOverflow(
        "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion).",
      ),
    ).toBe(4000);
    expect(countInOverflow('prompt is too long: 210000 tokens > 200000 maximum')).toBe(210000);
    expect(
      countInOverflow('request (4476 tokens) exceeds the available context size (4096 tokens)'),
    ).toBe(4476);
    expect(countInOverflow('context length exceeded')).toBeUndefined();
  });
});

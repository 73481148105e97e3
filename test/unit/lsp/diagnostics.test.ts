import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Diagnostic } from 'vscode-languageserver-protocol';
import { findLanguageFiles } from '../../../src/main/lsp/detect.ts';
import { withDiagnostics } from '../../../src/main/lsp/format.ts';
import type { LspDiagnostic, LspFileOutcome } from '../../../src/workers/protocol/lsp.ts';
import {
  codeOf,
  forModel,
  fromTsserver,
  introduced,
} from '../../../src/workers/lsp/diagnostics.ts';
import { makeWorkspace } from '../config/helpers.ts';

const at = (
  line: number,
  message: string,
  code?: number | string,
  severity: 1 | 2 = 1,
): Diagnostic => ({
  range: { start: { line, character: 4 }, end: { line, character: 8 } },
  severity,
  ...(code !== undefined ? { code } : {}),
  source: 'typescript',
  message,
});

describe('what a change brought', () => {
  it('compares by severity, code and message: lines may move, as many of a kind as were added count', () => {
    const before = [at(3, 'a', 1), at(9, 'b', 2)];
    const after = [at(5, 'a', 1), at(6, 'b', 2), at(11, 'b', 2), at(12, 'c', 3)];
    expect(introduced(after, before).map((d) => [d.range.start.line, d.message])).toEqual([
      [11, 'b'],
      [12, 'c'],
    ]);
    expect(introduced(before, before)).toEqual([]);
  });

  it("prints TypeScript's codes as TS2322, others as sent; 1-based places for the model", () => {
    expect(codeOf({ code: 2322, source: 'typescript' })).toBe('TS2322');
    expect(codeOf({ code: 'reportMissingImports', source: 'Pyright' })).toBe(
      'reportMissingImports',
    );
    expect(codeOf({ code: 'E0308', source: 'rustc' })).toBe('E0308');
    expect(codeOf({ source: 'gopls' })).toBeUndefined();
    expect(forModel(at(2, 'x', 2345), 'src/a.ts')).toEqual({
      file: 'src/a.ts',
      line: 3,
      column: 5,
      severity: 'error',
      code: 'TS2345',
      message: 'x',
    });
  });

  it("reads tsserver's own shape (1-based, categories) as LSP's", () => {
    expect(
      fromTsserver({
        start: { line: 3, offset: 35 },
        end: { line: 3, offset: 49 },
        text: "Type 'string' is not assignable to type 'number'.",
        code: 2322,
        category: 'error',
      }),
    ).toEqual({
      range: { start: { line: 2, character: 34 }, end: { line: 2, character: 48 } },
      severity: 1,
      code: 2322,
      source: 'typescript',
      message: "Type 'string' is not assignable to type 'number'.",
    });
  });
});

const diagnostic = (
  line: number,
  severity: LspDiagnostic['severity'] = 'error',
): LspDiagnostic => ({
  file: 'src/a.ts',
  line,
  column: 1,
  severity,
  code: 'TS1',
  message: `problem on line ${line}`,
});

const outcome = (
  introducedNow: LspDiagnostic[],
  more: Partial<LspFileOutcome> = {},
): LspFileOutcome => ({
  file: 'src/a.ts',
  server: 'typescript',
  outcome: 'checked',
  introduced: introducedNow,
  baseline: true,
  errors: introducedNow.length,
  warnings: 0,
  ms: 40,
  ...more,
});

describe("an edit's result with its diagnostics", () => {
  const edited = { ok: true as const, output: 'Overwrote src/a.ts.', data: { path: 'src/a.ts' } };

  it('says nothing when nothing new was found, or the server did not answer', () => {
    expect(withDiagnostics(edited, [outcome([])])).toBe(edited);
    expect(withDiagnostics(edited, [outcome([diagnostic(1)], { outcome: 'timeout' })])).toBe(
      edited,
    );
  });

  it('appends the new errors under a header, and tells front-ends how many and which', () => {
    const result = withDiagnostics(edited, [outcome([diagnostic(3), diagnostic(7, 'warning')])]);
    expect(result.ok && result.output).toBe(
      'Overwrote src/a.ts.\n\n[typescript] 1 new error and 1 new warning in src/a.ts:\nsrc/a.ts:3:1 error TS1: problem on line 3\nsrc/a.ts:7:1 warning TS1: problem on line 7',
    );
    expect(result.ok && result.data).toEqual({
      path: 'src/a.ts',
      diagnostics: {
        errors: 1,
        warnings: 1,
        lines: [
          'src/a.ts:3:1 error TS1: problem on line 3',
          'src/a.ts:7:1 warning TS1: problem on line 7',
        ],
      },
    });
  });

  it('without what the file had before, says the errors are there after the change', () => {
    const result = withDiagnostics(edited, [outcome([diagnostic(3)], { baseline: false })]);
    expect(result.ok && result.output).toContain(
      '[typescript] 1 error in src/a.ts after this change:',
    );
  });

  it('is bounded: 20 lines at most, and says how many more there are and where', () => {
    const many = Array.from({ length: 50 }, (_, i) => diagnostic(i + 1));
    const result = withDiagnostics(edited, [outcome(many)]);
    const lines = (result.ok ? result.output : '').split('\n');
    expect(lines.filter((l) => l.startsWith('src/a.ts:'))).toHaveLength(20);
    expect(lines.at(-1)).toBe("(+30 more: the lsp tool's diagnostics operation lists them all)");
  });
});

describe('which languages a workspace has', () => {
  it('finds the first file of each ending, nearest the root, never in dependencies or hidden directories', () => {
    const ws = makeWorkspace();
    const put = (file: string) => {
      mkdirSync(path.dirname(path.join(ws.repo, file)), { recursive: true });
      writeFileSync(path.join(ws.repo, file), '');
    };
    for (const file of [
      'node_modules/x/index.ts',
      '.cache/a.py',
      'src/deep/b.ts',
      'src/a.ts',
      'types.d.ts',
      'dist/out.go',
    ])
      put(file);
    return findLanguageFiles(ws.repo, new Set(['.ts', '.py', '.go'])).then((found) =>
      expect(Object.fromEntries(found)).toEqual({ '.ts': path.join(ws.repo, 'src/a.ts') }),
    );
  });
});

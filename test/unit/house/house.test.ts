import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it, onTestFinished } from 'vitest';

const house = path.resolve('scripts/house.mjs');

const tree = (files: Record<string, string>) => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'nf-house-'));
  onTestFinished(() => rmSync(root, { recursive: true, force: true }));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, 'src', name)), { recursive: true });
    writeFileSync(path.join(root, 'src', name), text);
  }
  return root;
};

describe('scripts/house.mjs', () => {
  it('fails on a runtime import cycle, naming it', async () => {
    const root = tree({
      'a.ts': "import { b } from './b.ts';\nexport const a = () => b;\n",
      'b.ts': "import { a } from './a.ts';\nexport const b = () => a;\n",
    });
    const result = await execa(process.execPath, [house, '--root', root], { reject: false });
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('runtime import cycle: src/a.ts → src/b.ts');
  });

  it('reports a type-only cycle and a long function, and fails once they pass their ceilings (now 0)', async () => {
    const long = Array.from({ length: 70 }, (_, i) => `  const x${i} = ${i};`).join('\n');
    const root = tree({
      'a.ts': `import type { B } from './b.ts';\nexport type A = B | 1;\nexport function big() {\n${long}\n}\n`,
      'b.ts': "import { type A } from './a.ts';\nexport type B = A | 2;\n",
    });
    const result = await execa(process.execPath, [house, '--root', root, '--json'], {
      reject: false,
    });
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain(
      'house: 1 import cycles closed by a type-only import, over the ceiling of 0',
    );
    expect(result.stderr).toContain('house: 1 functions over 60 lines, over the ceiling of 0');
    const report = JSON.parse(result.stdout);
    expect(report.typeOnlyCycles).toEqual([['src/a.ts', 'src/b.ts']]);
    expect(report.longFunctions).toEqual([{ file: 'src/a.ts', name: 'big', lines: 72 }]);
  });

  it('names imports up the layers of src/main, big files and unused exports', async () => {
    const body = Array.from({ length: 410 }, (_, i) => `const y${i} = ${i};`).join('\n');
    const root = tree({
      'main/config/load.ts':
        "import type { Turn } from '../engine/turn.ts';\nexport type Loaded = Turn;\n",
      'main/engine/turn.ts': 'export type Turn = 1;\nexport const unusedHere = 2;\n',
      'main/engine/big.ts': `${body}\nexport {};\n`,
    });
    const result = await execa(process.execPath, [house, '--root', root, '--json'], {
      reject: false,
    });
    const report = JSON.parse(result.stdout);
    expect(report.upwardImports).toEqual([
      {
        from: 'src/main/config/load.ts',
        to: 'src/main/engine',
        files: ['src/main/engine/turn.ts'],
      },
    ]);
    expect(report.bigFiles).toEqual([{ file: 'src/main/engine/big.ts', lines: 412 }]);
    expect(report.unusedExports).toEqual([
      { file: 'src/main/config/load.ts', name: 'Loaded' },
      { file: 'src/main/engine/turn.ts', name: 'unusedHere' },
    ]);
  });

  it('fails when a figure passes its ceiling, naming the ceiling and the goal', async () => {
    const long = Array.from({ length: 70 }, (_, i) => `  const x${i} = ${i};`).join('\n');
    const functions = Array.from(
      { length: 9 },
      (_, i) => `export function f${i}() {\n${long}\n}\n`,
    );
    const root = tree({ 'a.ts': functions.join('') });
    const result = await execa(process.execPath, [house, '--root', root], { reject: false });
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toMatch(
      /house: 9 functions over 60 lines, over the ceiling of \d+ .*\(goal 0\)/,
    );
  });

  it('fails on a folder of src/main that is in no layer', async () => {
    const root = tree({ 'main/elsewhere/x.ts': 'export const x = 1;\n' });
    const result = await execa(process.execPath, [house, '--root', root], { reject: false });
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('src/main/elsewhere is in no layer');
  });
});

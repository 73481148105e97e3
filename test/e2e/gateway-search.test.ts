import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { stdioConsumer } from './gateway.ts';
import { makeE2eWorkspace } from './workspace.ts';

describe('niffler mcp serve: grep and glob for a gateway client', () => {
  it('sends progress notifications and a structured answer that says whether it is complete', async () => {
    const ws = makeE2eWorkspace();
    rmSync(path.join(ws.repo, '.git'), { recursive: true });
    execFileSync('git', ['init', '-q'], { cwd: ws.repo });
    writeFileSync(path.join(ws.repo, '.gitignore'), 'build/\n');
    mkdirSync(path.join(ws.repo, 'src'));
    mkdirSync(path.join(ws.repo, 'build'));
    for (let i = 0; i < 60; i++)
      writeFileSync(path.join(ws.repo, 'src', `f${i}.ts`), `export const v${i} = ${i}; // TODO\n`);
    writeFileSync(path.join(ws.repo, 'build', 'out.ts'), '// TODO built\n');
    const client = await stdioConsumer(ws);
    const progress: { progress: number; total?: number }[] = [];
    const result = await client.callTool(
      { name: 'grep', arguments: { pattern: 'TODO', output_mode: 'files_with_matches' } },
      { onprogress: (p) => progress.push(p) },
    );
    expect(result.structuredContent).toMatchObject({
      mode: 'files_with_matches',
      found: 60,
      searched: 60, // .gitignore is hidden
      complete: true,
    });
    expect(progress.at(-1)).toMatchObject({ progress: 60, total: 60 });
    const cut = await client.callTool({
      name: 'glob',
      arguments: { pattern: '**/*.ts', head_limit: 10 },
    });
    expect(cut.structuredContent).toMatchObject({
      shown: 10,
      complete: true,
      next: { offset: 10 },
    });
    const text = (cut.content as { text: string }[])[0]!.text;
    expect(text.split('\n').at(-1)).toBe(
      '(head_limit 10 reached; more follow: continue with offset: 10)',
    );
  });
});

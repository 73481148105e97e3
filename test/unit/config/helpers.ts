import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { onTestFinished } from 'vitest';

/** A temporary `$NIFFLER_HOME` and git-style repository, removed after the test. */
export const makeWorkspace = (options: { gitFile?: boolean } = {}) => {
  const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'niffler-cfg-')));
  onTestFinished(() => rmSync(base, { recursive: true, force: true }));
  const home = path.join(base, 'home');
  const repo = path.join(base, 'repo');
  mkdirSync(home, { recursive: true });
  mkdirSync(repo, { recursive: true });
  if (options.gitFile)
    writeFileSync(path.join(repo, '.git'), 'gitdir: /somewhere/else/.git/worktrees/repo\n');
  else mkdirSync(path.join(repo, '.git'));
  const write = (file: string, text: string): string => {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
    return file;
  };
  return {
    base,
    home,
    repo,
    env: { NIFFLER_HOME: home, HOME: base } as Record<string, string>,
    writeGlobal: (text: string) => write(path.join(home, 'config.yaml'), text),
    writeRepo: (text: string) => write(path.join(repo, '.niffler', 'config.yaml'), text),
    writeMcpJson: (text: string) => write(path.join(repo, '.mcp.json'), text),
    write,
  };
};

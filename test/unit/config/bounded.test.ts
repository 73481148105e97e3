import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, symlinkSync, truncateSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/main/extensions/workspace-config.ts';
import { makeWorkspace } from './helpers.ts';

type Plant = (file: string) => void;

const PLANTS: { name: string; plant: Plant; says: RegExp }[] = [
  {
    name: 'a symlink to /dev/zero',
    plant: (file) => symlinkSync('/dev/zero', file),
    says: / is a device file; only regular files are read/,
  },
  {
    name: 'a FIFO',
    plant: (file) => execFileSync('mkfifo', [file]),
    says: / is a FIFO \(named pipe\); only regular files are read/,
  },
  {
    name: 'a 200 MB file',
    plant: (file) => {
      closeSync(openSync(file, 'w'));
      truncateSync(file, 200 * 1024 * 1024);
    },
    says: / is 200\.0 MiB, over the 4\.0 MiB this file may have; make it smaller/,
  },
];

describe('config files are read bounded', () => {
  it.each(PLANTS.flatMap((p) => ['.niffler/config.yaml', '.mcp.json'].map((at) => ({ ...p, at }))))(
    '$at as $name is a clear config error, not a hang or a read without end',
    ({ at, plant, says }) => {
      const ws = makeWorkspace();
      mkdirSync(path.join(ws.repo, '.niffler'), { recursive: true });
      plant(path.join(ws.repo, at));
      const result = loadConfig({ cwd: ws.repo, env: ws.env });
      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect(result.error.code).toBe('config-invalid');
      expect(result.error.message).toMatch(new RegExp(`${at.replace(/\./g, '\\.')}${says.source}`));
    },
  );
});

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  isGroupRunning,
  killGroup,
  processStartTime,
  reapGroups,
  recordGroup,
  selfAsOwner,
  type GroupRecord,
} from '../../../src/workers/shared/process-group.ts';

const tempDir = () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nf-reap-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

/** A process group of two (a leader and its child), as a server that spawned something. */
const startGroup = async (): Promise<number> => {
  const leader = spawn(
    process.execPath,
    [
      '-e',
      "require('child_process').spawn(process.execPath, ['-e', 'setInterval(() => {}, 1e6)'], { stdio: 'ignore' }); setInterval(() => {}, 1e6)",
    ],
    { detached: true, stdio: 'ignore' },
  );
  await once(leader, 'spawn');
  const pid = leader.pid!;
  onTestFinished(() => void killGroup(pid, 'SIGKILL'));
  return pid;
};

/** The owner a killed daemon leaves in its records: a process that has exited. */
const goneOwner = async (): Promise<GroupRecord['owner']> => {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 50)'], { stdio: 'ignore' });
  await once(child, 'spawn');
  const start = processStartTime(child.pid!);
  await once(child, 'exit');
  return { pid: child.pid!, start };
};

describe('reaping the servers a killed daemon left', () => {
  it('ends a recorded group whose owner is gone, its children too, and forgets it', async () => {
    const dir = tempDir();
    const pid = await startGroup();
    recordGroup(dir, {
      pid,
      start: processStartTime(pid),
      label: 'stubborn',
      owner: await goneOwner(),
    });
    expect(await isGroupRunning(pid)).toBe(true);
    expect(await reapGroups(dir)).toMatchObject([{ pid, label: 'stubborn' }]);
    expect(await isGroupRunning(pid)).toBe(false);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('ends a group whose leader has exited while a child of it runs on (found in /proc)', async () => {
    const dir = tempDir();
    // The leader spawns a child in its group, says so, and exits.
    const leader = spawn(
      process.execPath,
      [
        '-e',
        "require('child_process').spawn(process.execPath, ['-e', 'setInterval(() => {}, 1e6)'], { stdio: 'ignore' }).unref(); process.stdout.write('spawned\\n')",
      ],
      { detached: true, stdio: ['ignore', 'pipe', 'ignore'] },
    );
    const pid = leader.pid!;
    onTestFinished(() => void killGroup(pid, 'SIGKILL'));
    const start = processStartTime(pid);
    await once(leader.stdout, 'data');
    await once(leader, 'exit');
    recordGroup(dir, { pid, start, label: 'leaderless', owner: await goneOwner() });
    expect(await isGroupRunning(pid)).toBe(true);
    expect(await reapGroups(dir)).toMatchObject([{ pid, label: 'leaderless' }]);
    expect(await isGroupRunning(pid)).toBe(false);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('never hits a reused pid (another start time), nor the groups of an owner still running', async () => {
    const dir = tempDir();
    const reused = await startGroup();
    const owned = await startGroup();
    recordGroup(dir, { pid: reused, start: '1', label: 'recycled', owner: await goneOwner() });
    recordGroup(dir, {
      pid: owned,
      start: processStartTime(owned),
      label: 'live',
      owner: selfAsOwner(),
    });
    expect(await reapGroups(dir)).toEqual([]);
    expect(await isGroupRunning(reused)).toBe(true);
    expect(await isGroupRunning(owned)).toBe(true);
    // The reused pid's record is gone (its group is); the live owner's stays.
    expect(readdirSync(dir)).toEqual([`${owned}.json`]);
  });
});

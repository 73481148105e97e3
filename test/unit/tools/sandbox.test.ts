import {
  chmodSync,
  copyFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type Server } from 'node:net';
import { once } from 'node:events';
import path from 'node:path';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import type { ToolContext } from '../../../src/workers/protocol/tools.ts';
import { isInside } from '../../../src/workers/shared/confine.ts';
import { probeBwrap } from '../../../src/workers/shared/sandbox-command.ts';
import { isAlive, runTool, tempRepo, textOf, type TempRepo } from './repo.ts';

const probe = await probeBwrap();
const inBwrap = `in bubblewrap${probe.ok ? '' : ` — skipped: ${probe.reason}`}`;

/** A repo whose bash runs sandboxed (`bwrap` mode: a missing sandbox fails the call). */
const sandboxedRepo = (bash: Partial<ToolContext['bash']> = {}): TempRepo => {
  const repo = tempRepo();
  repo.context.bash = { ...repo.context.bash, sandbox: 'bwrap', ...bash };
  return repo;
};

const bash = (repo: TempRepo, command: string) => runTool(repo.context, 'bash', { command });

/** A child that leaves the process group (setsid) and runs on; the command waits until it does. */
const ESCAPE_SECONDS = String(4_000_000 + (process.pid % 100_000));
const ESCAPE =
  `setsid sh -c 'echo $$ > escaped.pid; exec sleep ${ESCAPE_SECONDS}' & ` +
  'until [ -s escaped.pid ]; do :; done; echo escaped';

/** Pids of running processes whose command line is exactly `argv`. */
const processesRunning = (argv: string[]): number[] =>
  readdirSync('/proc')
    .filter((pid) => /^\d+$/.test(pid))
    .filter((pid) => {
      try {
        const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        const state = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0];
        return cmdline === `${argv.join('\0')}\0` && state !== 'Z';
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);

const listen = async (): Promise<{ server: Server; port: number; connections: number[] }> => {
  const connections: number[] = [];
  const server = createServer((socket) => {
    connections.push(1);
    socket.end('hello\n');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  onTestFinished(() => void server.close());
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  return { server, port: address.port, connections };
};

describe.skipIf(!probe.ok)(inBwrap, () => {
  it('writes the workspace and a private /tmp, nothing else', async () => {
    const repo = sandboxedRepo();
    const marker = `niffler-sandbox-${process.pid}-${Date.now()}`;
    const result = await bash(
      repo,
      [
        'echo in > inside.txt',
        'echo out > ../outside/new.txt',
        `echo out > /var/tmp/${marker}`,
        `echo t > /tmp/${marker}`,
        `cat /tmp/${marker}`,
      ].join('; '),
    );
    // The sibling directory is not even there (it lives under the host's /tmp); /var/tmp is
    // there, read-only.
    expect(textOf(result)).toMatch(/outside\/new\.txt: No such file or directory/);
    expect(textOf(result)).toMatch(new RegExp(`/var/tmp/${marker}: Read-only file system`));
    expect(textOf(result)).toMatch(/^t$/m);
    expect(readFileSync(path.join(repo.root, 'inside.txt'), 'utf8')).toBe('in\n');
    expect(existsSync(path.join(repo.outside, 'new.txt'))).toBe(false);
    expect(existsSync(`/var/tmp/${marker}`)).toBe(false);
    expect(existsSync(`/tmp/${marker}`)).toBe(false);
    expect(result).toMatchObject({ ok: true, data: { sandboxed: true } });
  });

  it('cannot change the hooks or config git runs later, outside the sandbox', async () => {
    const repo = sandboxedRepo();
    const result = await bash(repo, 'echo evil > .git/hooks/pre-commit; echo evil >> .git/config');
    expect(textOf(result)).toMatch(/pre-commit: Read-only file system/);
    expect(textOf(result)).toMatch(/\.git\/config: Read-only file system/);
    expect(existsSync(path.join(repo.root, '.git', 'hooks', 'pre-commit'))).toBe(false);
    expect(readFileSync(path.join(repo.root, '.git', 'config'), 'utf8')).not.toContain('evil');
  });

  it('a .git symlink: its target is read-only, and a .git made in its place is moved aside', async () => {
    const repo = sandboxedRepo();
    const gitdir = path.join(repo.root, 'store');
    renameSync(path.join(repo.root, '.git'), gitdir);
    symlinkSync('store', path.join(repo.root, '.git'));
    const result = await bash(
      repo,
      'echo evil >> store/config; rm .git && mkdir .git && echo evil > .git/config',
    );
    expect(textOf(result)).toMatch(/store\/config: Read-only file system/);
    expect(textOf(result)).toContain('moved aside');
    expect(readlinkSync(path.join(repo.root, '.git'), { encoding: 'utf8' })).toBe('store');
    expect(readFileSync(path.join(gitdir, 'config'), 'utf8')).not.toContain('evil');
  });

  it('a .git file (a linked worktree): the file and the gitdir it names are read-only', async () => {
    const repo = sandboxedRepo();
    const gitdir = path.join(repo.root, 'elsewhere');
    renameSync(path.join(repo.root, '.git'), gitdir);
    writeFileSync(path.join(repo.root, '.git'), 'gitdir: elsewhere\n');
    const result = await bash(repo, 'echo evil >> elsewhere/config; echo "gitdir: x" > .git');
    expect(textOf(result)).toMatch(/elsewhere\/config: Read-only file system/);
    expect(textOf(result)).toMatch(/\.git: Read-only file system/);
    expect(readFileSync(path.join(repo.root, '.git'), 'utf8')).toBe('gitdir: elsewhere\n');
  });

  it('with a git write approved (gitWritable), .git is writable; .niffler stays read-only', async () => {
    const repo = sandboxedRepo({ gitWritable: true });
    mkdirSync(path.join(repo.root, '.niffler'));
    const result = await bash(repo, 'echo ok > .git/approved; echo no > .niffler/x');
    expect(readFileSync(path.join(repo.root, '.git', 'approved'), 'utf8')).toBe('ok\n');
    expect(textOf(result)).toMatch(/\.niffler\/x: Read-only file system/);
  });

  it("cannot change the rules niffler runs under: the repository's .niffler/ and .mcp.json", async () => {
    const repo = sandboxedRepo();
    mkdirSync(path.join(repo.root, '.niffler'), { recursive: true });
    writeFileSync(path.join(repo.root, '.niffler', 'config.yaml'), 'agent: { maxSteps: 3 }\n');
    writeFileSync(path.join(repo.root, '.mcp.json'), '{"mcpServers":{}}\n');
    const result = await bash(
      repo,
      "echo 'tools: { policy: { bash: allow } }' > .niffler/config.yaml; echo x > .niffler/new.yaml; echo '{}' > .mcp.json",
    );
    expect(textOf(result)).toMatch(/config\.yaml: Read-only file system/);
    expect(textOf(result)).toMatch(/\.mcp\.json: Read-only file system/);
    expect(readFileSync(path.join(repo.root, '.niffler', 'config.yaml'), 'utf8')).toBe(
      'agent: { maxSteps: 3 }\n',
    );
    expect(existsSync(path.join(repo.root, '.niffler', 'new.yaml'))).toBe(false);
    expect(readFileSync(path.join(repo.root, '.mcp.json'), 'utf8')).toBe('{"mcpServers":{}}\n');
  });

  it('cannot read a marker in a hidden directory', async () => {
    const repo = sandboxedRepo();
    writeFileSync(path.join(repo.home, 'marker.txt'), 'HIDDEN-MARKER\n');
    const result = await bash(
      repo,
      `cat ${path.join(repo.home, 'marker.txt')}; ls -A ${repo.home}`,
    );
    expect(textOf(result)).not.toContain('HIDDEN-MARKER');
    expect(textOf(result)).toContain('No such file or directory');
    // Unsandboxed, the same command reads it: the test can tell the two apart.
    repo.context.bash = { ...repo.context.bash, sandbox: 'off' };
    expect(textOf(await bash(repo, `cat ${path.join(repo.home, 'marker.txt')}`))).toContain(
      'HIDDEN-MARKER',
    );
  });

  it('cannot open a socket to a loopback listener with the network off; can with it on', async () => {
    const { port, connections } = await listen();
    const connect = `exec 3<>/dev/tcp/127.0.0.1/${port} && head -1 <&3`;
    const off = await bash(sandboxedRepo(), connect);
    expect(textOf(off)).toMatch(/Connection refused|Network is unreachable/);
    expect(connections).toHaveLength(0);
    const on = await bash(sandboxedRepo({ network: true }), connect);
    expect(textOf(on)).toContain('hello');
    expect(connections).toHaveLength(1);
  });

  it('ends a setsid child with the call: nothing of the sandbox outlives it', async () => {
    const repo = sandboxedRepo();
    // Its pid inside the sandbox's namespace means nothing here: it is found by its command line.
    const result = await bash(repo, ESCAPE);
    expect(textOf(result)).toContain('escaped');
    expect(processesRunning(['sleep', ESCAPE_SECONDS])).toEqual([]);
  });

  it('reports the signal a sandboxed command died of', async () => {
    const result = await bash(sandboxedRepo(), 'kill -TERM $$');
    expect(result).toMatchObject({ ok: true, data: { signal: 'SIGTERM', exitCode: null } });
  });
});

describe('bash without bubblewrap', () => {
  it.skipIf(process.platform !== 'linux')(
    'ends a setsid child that left its group, found by the variable it inherited',
    async () => {
      const repo = tempRepo(); // sandbox: off
      // The command returns only once the escaped child runs and has written its pid.
      const result = await bash(repo, ESCAPE);
      expect(textOf(result)).toContain('escaped');
      const pid = Number(readFileSync(path.join(repo.root, 'escaped.pid'), 'utf8'));
      expect(pid).toBeGreaterThan(0);
      expect(isAlive(pid)).toBe(false);
    },
  );

  it('in auto, runs unsandboxed and adds the note it is given (once per daemon)', async () => {
    const repo = tempRepo();
    const note = 'note: bash is not sandboxed (bubblewrap (bwrap) is not installed)';
    repo.context.bash = {
      ...repo.context.bash,
      sandbox: 'auto',
      bwrap: { ok: false, reason: 'bubblewrap (bwrap) is not installed' },
      note,
    };
    const result = await bash(repo, 'echo hi');
    expect(result).toMatchObject({ ok: true, data: { sandboxed: false } });
    expect(textOf(result)).toBe(`hi\n[${note}; exit code 0]`);
  });

  it('in bwrap mode, refuses to run and says how to get it', async () => {
    const repo = tempRepo();
    repo.context.bash = {
      ...repo.context.bash,
      sandbox: 'bwrap',
      bwrap: { ok: false, reason: 'bubblewrap (bwrap) is not installed' },
    };
    expect(await bash(repo, 'touch ran')).toEqual({
      ok: false,
      error: {
        code: 'exec-failed',
        message:
          'tools.bash.sandbox is "bwrap", but bubblewrap (bwrap) is not installed. Install ' +
          'bubblewrap (apt install bubblewrap), or set tools.bash.sandbox to auto or off.',
      },
    });
    expect(existsSync(path.join(repo.root, 'ran'))).toBe(false);
  });
});

/**
 * A node binary the command can run: this one, or a link to it in the workspace where it lives
 * under the host's /tmp, which is private inside the sandbox (a CI clone there).
 */
const reachableNode = (repo: TempRepo): string => {
  if (!isInside(process.execPath, realpathSync(tmpdir()))) return process.execPath;
  const node = path.join(repo.root, '.node-for-test');
  try {
    linkSync(process.execPath, node);
  } catch {
    copyFileSync(process.execPath, node);
    chmodSync(node, 0o755);
  }
  return node;
};

describe.each([
  { name: 'unsandboxed', sandbox: 'off' as const },
  ...(probe.ok ? [{ name: 'in bubblewrap', sandbox: 'bwrap' as const }] : []),
])('bash environment and limits, $name', ({ sandbox }) => {
  const repoWith = (bash: Partial<ToolContext['bash']> = {}) => {
    const repo = tempRepo();
    repo.context.bash = { ...repo.context.bash, sandbox, ...bash };
    return repo;
  };

  it('shows no provider key in env unless tools.bash.passEnv names it', async () => {
    vi.stubEnv('OPENAI_API_KEY', 'sk-test-provider-key-0123456789');
    vi.stubEnv('ANTHROPIC_API_KEY', 'sk-ant-test-key-0123456789');
    const plain = textOf(await bash(repoWith(), 'env'));
    expect(plain).not.toContain('sk-test-provider-key');
    expect(plain).not.toContain('sk-ant-test-key');
    expect(plain).toMatch(/^PATH=/m);
    const named = textOf(await bash(repoWith({ passEnv: ['OPENAI_API_KEY'] }), 'env'));
    expect(named).toContain('OPENAI_API_KEY=sk-test-provider-key-0123456789');
    expect(named).not.toContain('sk-ant-test-key');
  });

  it('limits the size of a file written (tools.bash.limits.fileSizeMB)', async () => {
    const repo = repoWith({ limits: { fileSizeMB: 1 } });
    const result = await bash(repo, 'head -c 3000000 /dev/zero > big; wc -c < big');
    expect(textOf(result)).toContain('1048576');
  });

  it('limits CPU seconds (tools.bash.limits.cpuSeconds)', async () => {
    const repo = repoWith({ limits: { cpuSeconds: 1 } });
    const result = await bash(repo, 'while :; do :; done');
    expect(result).toMatchObject({
      ok: true,
      data: { signal: expect.stringMatching(/SIGXCPU|SIGKILL/) },
    });
  });

  it('limits writable memory (tools.bash.limits.memoryMB)', async () => {
    const repo = repoWith({ limits: { memoryMB: 200 } });
    const grow = (at: TempRepo) =>
      `${reachableNode(at)} -e "Buffer.alloc(400 * 1024 * 1024, 1); console.log('allocated')"`;
    const limited = textOf(await bash(repo, grow(repo)));
    expect(limited).not.toContain('allocated');
    // It ran, and failed for memory: not a command that could not start.
    expect(limited).toMatch(/allocation failed|out of memory|Cannot allocate/i);
    const free = repoWith();
    expect(textOf(await bash(free, grow(free)))).toContain('allocated');
  });
});

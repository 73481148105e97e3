// Runs the MCP conformance suite: its client scenarios against test/conformance/client.ts
// (niffler's own MCP layer) and its server scenarios against `niffler mcp serve --http` (the
// gateway), in six legs:
//   0.1.16             every client scenario of @modelcontextprotocol/conformance 0.1.16
//                      (revision 2025-11-25);
//   2025-11-25         the alpha CLI (`conformance-alpha`), what revision 2025-11-25 requires of
//                      a client;
//   2026-07-28         the alpha CLI, what revision 2026-07-28 requires of a client;
//   server-0.1.16      every server scenario of 0.1.16;
//   server-2025-11-25  the alpha CLI, what revision 2025-11-25 requires of a server;
//   server-2026-07-28  the alpha CLI, what revision 2026-07-28 requires of a server.
// The alpha legs also run the scenarios the revision lists as not scored (extensions, pending,
// added after its release), which count apart. The server legs share one gateway: a temporary
// workspace whose one MCP server is test/fixtures/mcp/conformance-reference.ts (the tools,
// prompts and resources the scenarios call), kept by a real daemon and served under its own
// names (`--server conformance`). The suite sends no credentials, so a loopback relay adds the
// gateway's bearer token to each request and changes nothing else (as an MCP client's `headers`
// setting does). Prints one line per scenario and a count per leg. Exits non-zero for a failure
// not listed in test/conformance/expected-failures.yaml (a section per leg; an entry names a
// scenario, or `scenario:check-id` for one of its checks), for an argument naming no scenario,
// and when a leg finds no scenario at all. Needs Node >= 22 (npm scripts put it on PATH), and
// for the server legs the build (dist/cli.cjs).
//
//   node scripts/conformance.mjs [--leg NAME]… [scenario…]
import { execFileSync, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { fileURLToPath } from 'node:url';

const major = Number(process.versions.node.split('.')[0]);
if (major < 22) {
  console.error(
    `the conformance suite needs Node >= 22, this is ${process.version}; run it with npm run test:conformance`,
  );
  process.exit(2);
}

const root = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);
const packageDir = (name) => path.dirname(require.resolve(`${name}/package.json`));
const cliOf = (name) => path.join(packageDir(name), 'dist', 'index.js');
const expected =
  parse(readFileSync(path.join(root, 'test/conformance/expected-failures.yaml'), 'utf8')) ?? {};
// The suite runs the command through a shell and kills only that shell on a timeout: `exec`
// makes the client the process it kills. Paths quoted, for a checkout with spaces in its path.
const command = `exec ${JSON.stringify(process.execPath)} --import tsx ${JSON.stringify(path.join(root, 'test/conformance/client.ts'))}`;
/** Scenarios run at once: a client scenario is a client process with its worker thread and a mock server. */
const PARALLEL = { client: 2, server: 4 };
/** How long the gateway may take to listen (a daemon to start, its server to spawn). */
const GATEWAY_START_MS = 60_000;

const headings = { client: 'Client scenarios', server: 'Server scenarios' };

/** Every scenario of `role` that `conformance list` names (0.1.16 has no requirement sets). */
const listed = (cli, role) => {
  const lines = execFileSync(process.execPath, [cli, 'list'], { encoding: 'utf8' }).split('\n');
  const heading = lines.findIndex((line) => line.startsWith(headings[role]));
  if (heading === -1) return [];
  const names = [];
  for (const line of lines.slice(heading + 1)) {
    const name = /^\s+- (\S+)/.exec(line)?.[1];
    if (!name) break;
    names.push(name);
  }
  return names;
};

/** Extension scenarios already on the list of a leg, per role. */
const extensionsRun = new Set();

/** What a revision requires of `role`, and what it runs without scoring (frozen per release). */
const required = (revision, role) => {
  const file = path.join(packageDir('conformance-alpha'), 'requirements', `${revision}.yaml`);
  const set = parse(readFileSync(file, 'utf8'));
  const extra = (set.not_scored ?? []).filter((e) => e.leg === role);
  return [
    ...set[role].map((name) => ({ name, scored: true })),
    // An extension has no place on the spec timeline: it runs at its own version, in one leg.
    ...extra
      .filter((e) => e.reason !== 'extension' || !extensionsRun.has(`${role}:${e.scenario}`))
      .map((e) => {
        if (e.reason === 'extension') extensionsRun.add(`${role}:${e.scenario}`);
        return {
          name: e.scenario,
          scored: false,
          why: e.reason,
          ownVersion: e.reason === 'extension',
        };
      }),
  ];
};

const stable = cliOf('@modelcontextprotocol/conformance');
const alpha = cliOf('conformance-alpha');
const revisions = ['2025-11-25', '2026-07-28'];
const legs = [
  {
    name: '0.1.16',
    role: 'client',
    cli: stable,
    scenarios: () => listed(stable, 'client').map((name) => ({ name, scored: true })),
    expected: expected.client ?? {},
  },
  ...revisions.map((revision) => ({
    name: revision,
    role: 'client',
    cli: alpha,
    specVersion: revision,
    scenarios: () => required(revision, 'client'),
    expected: expected[`alpha-${revision}`] ?? {},
  })),
  {
    name: 'server-0.1.16',
    role: 'server',
    cli: stable,
    scenarios: () => listed(stable, 'server').map((name) => ({ name, scored: true })),
    expected: expected.server ?? {},
  },
  ...revisions.map((revision) => ({
    name: `server-${revision}`,
    role: 'server',
    cli: alpha,
    specVersion: revision,
    scenarios: () => required(revision, 'server'),
    expected: expected[`alpha-server-${revision}`] ?? {},
  })),
];

/**
 * Reads the checks a scenario recorded: passed when none failed and at least one succeeded; the
 * ids of the failed ones and of the successful ones.
 */
const verdict = (dir) => {
  const found = readdirSync(dir, { recursive: true }).find((f) =>
    String(f).endsWith('checks.json'),
  );
  const none = { pass: false, detail: 'no checks recorded', failed: [], succeeded: new Set() };
  if (!found) return none;
  const checks = JSON.parse(readFileSync(path.join(dir, String(found)), 'utf8'));
  const failures = checks.filter((c) => c.status === 'FAILURE');
  const successes = checks.filter((c) => c.status === 'SUCCESS');
  if (successes.length + failures.length === 0) return none;
  const failed = [...new Set(failures.map((c) => c.id))];
  return {
    pass: failures.length === 0,
    detail: failures.length
      ? `${failures.length} failed: ${failed.slice(0, 4).join(', ')}${failed.length > 4 ? '…' : ''}`
      : `${successes.length} check(s)`,
    failed,
    succeeded: new Set(successes.map((c) => c.id)),
    why: failures.map((c) => `  ${c.id}: ${c.errorMessage ?? c.description ?? ''}`).join('\n'),
  };
};

/** Runs one scenario with the leg's CLI; resolves with its verdict and the CLI's output. */
const run = (leg, scenario, target) =>
  new Promise((resolve) => {
    const out = mkdtempSync(path.join(tmpdir(), 'niffler-conformance-out-'));
    const args =
      leg.role === 'client'
        ? [leg.cli, 'client', '--command', command, '--scenario', scenario.name]
        : [leg.cli, 'server', '--url', target, '--scenario', scenario.name];
    if (leg.specVersion && !scenario.ownVersion) args.push('--spec-version', leg.specVersion);
    // 0.1.16 takes no --timeout for a server scenario.
    if (leg.role === 'client' || leg.cli === alpha) args.push('--timeout', '30000');
    args.push('-o', out);
    const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('close', () => {
      const result = verdict(out);
      rmSync(out, { recursive: true, force: true });
      resolve({ ...result, output });
    });
    child.on('error', (error) =>
      resolve({ pass: false, detail: error.message, failed: [], succeeded: new Set(), output }),
    );
  });

/**
 * How a scenario's verdict reads against the leg's expected failures: an entry for the whole
 * scenario, or entries `scenario:check-id` that must cover every failed check.
 */
const judge = (leg, name, v) => {
  const whole = leg.expected[name];
  const perCheck = new Map(
    Object.entries(leg.expected)
      .filter(([key]) => key.startsWith(`${name}:`))
      .map(([key, why]) => [key.slice(name.length + 1), why]),
  );
  if (v.pass) {
    const stale = whole
      ? [name]
      : [...perCheck.keys()].filter((id) => v.succeeded.has(id)).map((id) => `${name}:${id}`);
    return stale.length
      ? {
          tag: 'XPASS',
          note: ` — listed as expected to fail (${stale.join(', ')}); remove it from expected-failures.yaml`,
        }
      : { tag: 'PASS ', note: '' };
  }
  if (whole) return { tag: 'XFAIL', note: ` — expected: ${whole}` };
  if (v.failed.length > 0 && v.failed.every((id) => perCheck.has(id)))
    return {
      tag: 'XFAIL',
      note: ` — expected: ${v.failed.map((id) => `${id}: ${perCheck.get(id)}`).join('; ')}`,
    };
  return { tag: 'FAIL ', note: '', unexpected: true };
};

/** Runs `items` through `work`, `parallel` at a time, keeping their order in the results. */
const pool = async (items, parallel, work) => {
  const results = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, items.length) }, lane));
  return results;
};

/** This process's environment without the `NIFFLER_*` of the developer's shell, plus `extra`. */
const cleanEnv = (extra) => ({
  ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('NIFFLER_'))),
  ...extra,
});

/**
 * Starts the gateway the server legs test: a temporary workspace whose global config has one
 * server, the conformance fixture (trusted: its tools run without asking, as the suite's calls
 * need), `niffler mcp serve --http --server conformance` in it, and the relay that adds the
 * bearer token. Resolves with the relay's URL and `stop()`, which ends the gateway and the
 * workspace's daemon and removes the workspace.
 */
const startGateway = async () => {
  const cli = path.join(root, 'dist/cli.cjs');
  if (!existsSync(cli)) {
    console.error('the server legs test the build: run npm run build first');
    process.exit(2);
  }
  // A short path: the daemon's socket lives under NIFFLER_HOME, and socket paths are short.
  const base = realpathSync(mkdtempSync(path.join(tmpdir(), 'nf-conf-')));
  const home = path.join(base, 'h');
  const repo = path.join(base, 'repo');
  for (const dir of [home, path.join(repo, '.git')]) mkdirSync(dir, { recursive: true });
  const env = cleanEnv({ HOME: base, NIFFLER_HOME: home, NO_COLOR: '1' });
  const fixture = path.join(root, 'test/fixtures/mcp/conformance-reference.ts');
  const args = ['--import', import.meta.resolve('tsx'), fixture];
  writeFileSync(
    path.join(home, 'config.yaml'),
    `mcpServers:\n  conformance:\n    command: ${JSON.stringify(process.execPath)}\n    args: ${JSON.stringify(args)}\n    trust: true\n`,
  );
  const niffler = (argv, options = {}) =>
    spawn(process.execPath, [cli, ...argv], { cwd: repo, env, ...options });
  const cleanUp = async () => {
    await new Promise((resolve) => {
      const stopping = niffler(['daemon', 'stop'], { stdio: 'ignore' });
      stopping.once('exit', resolve);
      stopping.once('error', resolve);
    });
    rmSync(base, { recursive: true, force: true });
  };

  const child = niffler(['mcp', 'serve', '--http', '--json', '--server', 'conformance'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  let timer;
  const listening = await new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      if (out.trimEnd().endsWith('}')) resolve(JSON.parse(out));
    });
    void exited.then(() => reject(new Error(`niffler mcp serve --http exited: ${err.trim()}`)));
    timer = setTimeout(
      () =>
        reject(
          new Error(
            `niffler mcp serve --http did not listen in ${GATEWAY_START_MS} ms: ${err.trim()}`,
          ),
        ),
      GATEWAY_START_MS,
    );
  })
    .catch(async (error) => {
      child.kill('SIGKILL');
      await cleanUp();
      throw error;
    })
    .finally(() => clearTimeout(timer));
  const token = listening.token ?? readFileSync(listening.tokenFile, 'utf8').trim();
  const gateway = new URL(listening.url);

  // Each request as it came (method, path, headers — Host too — and body), plus the token.
  const relay = http.createServer((req, res) => {
    const upstream = http.request(
      {
        host: gateway.hostname,
        port: gateway.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, authorization: `Bearer ${token}` },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.once('error', () => res.destroy());
    res.once('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  await new Promise((resolve) => relay.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${relay.address().port}${gateway.pathname}`;
  return {
    url,
    stop: async () => {
      relay.closeAllConnections();
      relay.close();
      child.kill('SIGINT');
      await exited;
      await cleanUp();
    },
  };
};

const argv = process.argv.slice(2);
const wantedLegs = argv.flatMap((a, i) => (argv[i - 1] === '--leg' ? [a] : []));
const only = argv.filter((a, i) => a !== '--leg' && argv[i - 1] !== '--leg');
const chosen = legs.filter((l) => wantedLegs.length === 0 || wantedLegs.includes(l.name));
if (chosen.length === 0 || chosen.length < new Set(wantedLegs).size) {
  console.error(
    `unknown leg: ${wantedLegs.filter((w) => !legs.some((l) => l.name === w)).join(', ')}; legs: ${legs.map((l) => l.name).join(', ')}`,
  );
  process.exit(1);
}

let unexpected = 0;
const known = new Set();
const summaries = [];
const planned = chosen.map((leg) => ({ leg, all: leg.scenarios() }));
for (const { leg, all } of planned) {
  // An empty list means the suite's listing or requirement file changed: running nothing must not pass.
  if (all.length === 0) {
    console.error(
      `leg ${leg.name}: found no ${leg.role} scenarios (has the suite's format changed?)`,
    );
    process.exit(1);
  }
  all.forEach((s) => known.add(s.name));
}
const unknown = only.filter((name) => !known.has(name));
if (unknown.length > 0) {
  console.error(`unknown scenario(s): ${unknown.join(', ')}`);
  process.exit(1);
}
let gateway;
try {
  for (const { leg, all } of planned) {
    const scenarios = only.length === 0 ? all : all.filter((s) => only.includes(s.name));
    if (scenarios.length === 0) continue;
    const started = performance.now();
    const version = leg.name.replace(/^server-/, '');
    console.log(
      `— conformance ${version === '0.1.16' ? '0.1.16' : `alpha, revision ${version}`}, ${leg.role} scenarios`,
    );
    if (leg.role === 'server') gateway ??= await startGateway();
    const results = await pool(scenarios, PARALLEL[leg.role], (s) => run(leg, s, gateway?.url));
    const count = { scored: [0, 0], extra: [0, 0], expected: 0 };
    scenarios.forEach((s, i) => {
      const result = results[i];
      const { tag, note, unexpected: surprise } = judge(leg, s.name, result);
      const tally = count[s.scored ? 'scored' : 'extra'];
      tally[1]++;
      if (result.pass) tally[0]++;
      if (tag === 'XFAIL') count.expected++;
      const scored = s.scored ? '' : ` [not scored: ${s.why}]`;
      console.log(`${tag} ${s.name} (${result.detail})${scored}${note}`);
      if (surprise) {
        unexpected++;
        console.log(result.why || result.output.split('\n').slice(-25).join('\n'));
      }
    });
    const [passed, total] = count.scored;
    const extra = count.extra[1] ? `; not scored: ${count.extra[0]}/${count.extra[1]} passed` : '';
    const listedFailures = count.expected ? ` (${count.expected} listed as expected)` : '';
    const seconds = ((performance.now() - started) / 1000).toFixed(0);
    summaries.push(`${leg.name}: ${passed}/${total} passed${extra}`);
    console.log(
      `${passed} passed, ${total - passed} failed${extra}${listedFailures} — ${seconds} s`,
    );
  }
} finally {
  await gateway?.stop();
}
console.log(`conformance — ${summaries.join(' · ')}`);
process.exit(unexpected > 0 ? 1 : 0);

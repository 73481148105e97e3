// Runs the client scenarios of the MCP conformance suite against test/conformance/client.ts
// (niffler's own MCP layer), in three legs:
//   0.1.16       every client scenario of @modelcontextprotocol/conformance 0.1.16 (2025-11-25);
//   2025-11-25   the alpha CLI (`conformance-alpha`), what revision 2025-11-25 requires;
//   2026-07-28   the alpha CLI, what revision 2026-07-28 requires;
// the alpha legs also run the client scenarios the revision lists as not scored (extensions),
// which count apart. Prints one line per scenario and a count per leg. Exits non-zero for a
// failure not listed in test/conformance/expected-failures.yaml (a section per leg), for an
// argument naming no scenario, and when a leg finds no scenario at all. Needs Node >= 22 (npm
// scripts put it on PATH).
//
//   node scripts/conformance.mjs [--leg 0.1.16|2025-11-25|2026-07-28]… [scenario…]
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
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
/** Scenarios run at once: each is a client process with its worker thread and a mock server. */
const PARALLEL = 2;

/** Every client scenario `conformance list` names (0.1.16 has no requirement sets). */
const listed = (cli) => {
  const listing = execFileSync(process.execPath, [cli, 'list'], { encoding: 'utf8' });
  const heading = listing.indexOf('Client scenarios');
  if (heading === -1) return [];
  return listing
    .slice(heading)
    .split('\n')
    .map((line) => /^\s+- (\S+)/.exec(line)?.[1])
    .filter(Boolean);
};

/** Extension scenarios already on the list of a leg. */
const extensionsRun = new Set();

/** What a revision requires of a client, and what it runs without scoring (frozen per release). */
const required = (revision) => {
  const file = path.join(packageDir('conformance-alpha'), 'requirements', `${revision}.yaml`);
  const set = parse(readFileSync(file, 'utf8'));
  const extra = (set.not_scored ?? []).filter((e) => e.leg === 'client');
  return [
    ...set.client.map((name) => ({ name, scored: true })),
    // An extension has no place on the spec timeline: it runs at its own version, in one leg.
    ...extra
      .filter((e) => e.reason !== 'extension' || !extensionsRun.has(e.scenario))
      .map((e) => {
        if (e.reason === 'extension') extensionsRun.add(e.scenario);
        return {
          name: e.scenario,
          scored: false,
          why: e.reason,
          ownVersion: e.reason === 'extension',
        };
      }),
  ];
};

const legs = [
  {
    name: '0.1.16',
    cli: cliOf('@modelcontextprotocol/conformance'),
    scenarios: () =>
      listed(cliOf('@modelcontextprotocol/conformance')).map((name) => ({ name, scored: true })),
    expected: expected.client ?? {},
  },
  ...['2025-11-25', '2026-07-28'].map((revision) => ({
    name: revision,
    cli: cliOf('conformance-alpha'),
    specVersion: revision,
    scenarios: () => required(revision),
    expected: expected[`alpha-${revision}`] ?? {},
  })),
];

/** Reads the checks a scenario recorded; a scenario with no SUCCESS/FAILURE checks did not pass. */
const verdict = (dir) => {
  const found = readdirSync(dir, { recursive: true }).find((f) =>
    String(f).endsWith('checks.json'),
  );
  if (!found) return { pass: false, detail: 'no checks recorded' };
  const checks = JSON.parse(readFileSync(path.join(dir, String(found)), 'utf8'));
  const failures = checks.filter((c) => c.status === 'FAILURE');
  const successes = checks.filter((c) => c.status === 'SUCCESS');
  if (successes.length + failures.length === 0)
    return { pass: false, detail: 'no checks recorded' };
  return {
    pass: failures.length === 0,
    detail: failures.length
      ? `${failures.length} failed: ${failures
          .map((c) => c.id)
          .slice(0, 4)
          .join(', ')}`
      : `${successes.length} check(s)`,
  };
};

/** Runs one scenario with the leg's CLI; resolves with its verdict and the client's stderr. */
const run = (leg, scenario) =>
  new Promise((resolve) => {
    const out = mkdtempSync(path.join(tmpdir(), 'niffler-conformance-out-'));
    const args = [leg.cli, 'client', '--command', command, '--scenario', scenario.name];
    if (leg.specVersion && !scenario.ownVersion) args.push('--spec-version', leg.specVersion);
    args.push('--timeout', '30000', '-o', out);
    const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('close', () => {
      const result = verdict(out);
      rmSync(out, { recursive: true, force: true });
      resolve({ ...result, output });
    });
    child.on('error', (error) => resolve({ pass: false, detail: error.message, output }));
  });

/** Runs `items` through `work`, `PARALLEL` at a time, keeping their order in the results. */
const pool = async (items, work) => {
  const results = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL, items.length) }, lane));
  return results;
};

const argv = process.argv.slice(2);
const wantedLegs = argv.flatMap((a, i) => (argv[i - 1] === '--leg' ? [a] : []));
const only = argv.filter((a, i) => a !== '--leg' && argv[i - 1] !== '--leg');
const chosen = legs.filter((l) => wantedLegs.length === 0 || wantedLegs.includes(l.name));
if (chosen.length === 0) {
  console.error(
    `unknown leg: ${wantedLegs.join(', ')}; legs: ${legs.map((l) => l.name).join(', ')}`,
  );
  process.exit(1);
}

let unexpected = 0;
const known = new Set();
const summaries = [];
for (const leg of chosen) {
  const all = leg.scenarios();
  // An empty list means the suite's listing or requirement file changed: running nothing must not pass.
  if (all.length === 0) {
    console.error(`leg ${leg.name}: found no client scenarios (has the suite's format changed?)`);
    process.exit(1);
  }
  all.forEach((s) => known.add(s.name));
  const scenarios = only.length === 0 ? all : all.filter((s) => only.includes(s.name));
  console.log(`— conformance ${leg.name === '0.1.16' ? '0.1.16' : `alpha, revision ${leg.name}`}`);
  const results = await pool(scenarios, (s) => run(leg, s));
  const count = { scored: [0, 0], extra: [0, 0] };
  scenarios.forEach((s, i) => {
    const { pass, detail, output } = results[i];
    const reason = leg.expected[s.name];
    const tally = count[s.scored ? 'scored' : 'extra'];
    tally[1]++;
    if (pass) tally[0]++;
    const tag = pass ? (reason ? 'XPASS' : 'PASS ') : reason ? 'XFAIL' : 'FAIL ';
    const note = s.scored ? '' : ` [not scored: ${s.why}]`;
    const why = pass
      ? reason
        ? ' — listed as expected to fail; remove it from expected-failures.yaml'
        : ''
      : reason
        ? ` — expected: ${reason}`
        : '';
    console.log(`${tag} ${s.name} (${detail})${note}${why}`);
    if (!pass && !reason) {
      unexpected++;
      console.log(output.split('\n').slice(-25).join('\n'));
    }
  });
  const [passed, total] = count.scored;
  const extra = count.extra[1] ? `; not scored: ${count.extra[0]}/${count.extra[1]} passed` : '';
  summaries.push(`${leg.name}: ${passed}/${total} passed${extra}`);
  console.log(`${passed} passed, ${total - passed} failed${extra}`);
}
const unknown = only.filter((name) => !known.has(name));
if (unknown.length > 0) {
  console.error(`unknown client scenario(s): ${unknown.join(', ')}`);
  process.exit(1);
}
console.log(`conformance — ${summaries.join(' · ')}`);
process.exit(unexpected > 0 ? 1 : 0);

// Runs every client scenario of @modelcontextprotocol/conformance, one at a time, against
// test/conformance/client.ts (niffler's own MCP layer). Prints one line per scenario and, last,
// `N passed, M failed`. Exits non-zero for a failure not listed in
// test/conformance/expected-failures.yaml, for an argument naming no client scenario, and when
// no client scenario is found at all. Needs Node >= 22 (npm scripts put it on PATH).
import { execFileSync, spawnSync } from 'node:child_process';
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
const cli = path.join(
  path.dirname(require.resolve('@modelcontextprotocol/conformance/package.json')),
  'dist',
  'index.js',
);
const expected =
  parse(readFileSync(path.join(root, 'test/conformance/expected-failures.yaml'), 'utf8'))?.client ??
  {};
// The suite runs the command through a shell and kills only that shell on a timeout: `exec`
// makes the client the process it kills.
// A shell command line: paths quoted, for a checkout or Node with spaces in its path.
const command = `exec ${JSON.stringify(process.execPath)} --import tsx ${JSON.stringify(path.join(root, 'test/conformance/client.ts'))}`;

const listing = execFileSync(process.execPath, [cli, 'list'], { encoding: 'utf8' });
const heading = listing.indexOf('Client scenarios');
const available =
  heading === -1
    ? []
    : listing
        .slice(heading)
        .split('\n')
        .map((line) => /^\s+- (\S+)/.exec(line)?.[1])
        .filter(Boolean);
// An empty list means `conformance list` changed its output: running nothing must not pass.
if (available.length === 0) {
  console.error(
    'found no client scenarios in the output of `conformance list` (has its format changed?):\n' +
      listing,
  );
  process.exit(1);
}
const only = process.argv.slice(2);
const unknown = only.filter((name) => !available.includes(name));
if (unknown.length > 0) {
  console.error(
    `unknown client scenario(s): ${unknown.join(', ')}\navailable: ${available.join(', ')}`,
  );
  process.exit(1);
}
const scenarios = only.length === 0 ? available : available.filter((name) => only.includes(name));

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

let passed = 0;
let failed = 0;
let unexpected = 0;
for (const scenario of scenarios) {
  const out = mkdtempSync(path.join(tmpdir(), 'niffler-conformance-out-'));
  const run = spawnSync(
    process.execPath,
    [cli, 'client', '--command', command, '--scenario', scenario, '--timeout', '30000', '-o', out],
    {
      cwd: root,
      encoding: 'utf8',
    },
  );
  const { pass, detail } = run.error ? { pass: false, detail: run.error.message } : verdict(out);
  rmSync(out, { recursive: true, force: true });
  const reason = expected[scenario];
  if (pass) {
    passed++;
    console.log(
      `${reason ? 'XPASS' : 'PASS '} ${scenario} (${detail})${reason ? ' — listed as expected to fail; remove it from expected-failures.yaml' : ''}`,
    );
  } else {
    failed++;
    if (!reason) unexpected++;
    console.log(
      `${reason ? 'XFAIL' : 'FAIL '} ${scenario} (${detail})${reason ? ` — expected: ${reason}` : ''}`,
    );
    if (!reason && run.stderr) console.log(run.stderr.split('\n').slice(-15).join('\n'));
  }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(unexpected > 0 ? 1 : 0);

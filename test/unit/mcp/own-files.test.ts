import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ownFilesUnderTmp } from '../../../src/workers/mcp/server-launch.ts';

// Real files under the host's /tmp, which a sandboxed server would not see but for what its
// definition names as its own program.
const base = mkdtempSync(path.join('/tmp', 'niffler-own-files-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));
const file = (relative: string, text = '') => {
  const full = path.join(base, relative);
  mkdirSync(path.dirname(full), { recursive: true });
  writeFileSync(full, text);
  return full;
};
const project = path.join(base, 'project');
file('project/package.json', '{}');
const script = file('project/src/server.js');
const loader = file('project/node_modules/tsx/dist/loader.mjs');
const loose = file('loose.js');
const secret = file('secret/project/server.js');
file('secret/project/package.json', '{}');
const bin = file('bin/node-ish');
chmodSync(bin, 0o755);

describe("a sandboxed server's own files under /tmp", () => {
  it('are the projects its command and arguments name: a node_modules path, a package.json, a file URL', () => {
    expect(
      ownFilesUnderTmp(
        ['/usr/bin/node', '--import', pathToFileURL(loader).href, script],
        '/',
        [],
        undefined,
      ),
    ).toEqual([project]);
    expect(ownFilesUnderTmp(['node', 'src/server.js'], project, [], undefined)).toEqual([project]);
  });

  it('never are /tmp itself, a path in a hidden place, what is not there, or what lies outside /tmp', () => {
    expect(ownFilesUnderTmp(['/usr/bin/node', loose], '/', [], undefined)).toEqual([base]);
    expect(ownFilesUnderTmp(['/usr/bin/node', '/tmp'], '/', [], undefined)).toEqual([]);
    expect(
      ownFilesUnderTmp(['/usr/bin/node', secret], '/', [path.join(base, 'secret')], undefined),
    ).toEqual([]);
    expect(
      ownFilesUnderTmp(['/usr/bin/node', path.join(base, 'gone.js')], '/', [], undefined),
    ).toEqual([]);
    expect(
      ownFilesUnderTmp(['/usr/bin/node', '/usr/lib/x.js', '--flag=/tmp/a'], '/', [], undefined),
    ).toEqual([]);
  });

  it('finds a bare command on PATH', () => {
    expect(ownFilesUnderTmp(['node-ish'], '/', [], path.dirname(bin))).toEqual([path.dirname(bin)]);
  });
});

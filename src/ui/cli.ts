#!/usr/bin/env node
import { writeSync } from 'node:fs';
import { VERSION } from '../main/version.ts';
import { MIN_NODE, nodeTooOld } from './node-version.ts';

// The bin entry, built as CommonJS (dist/cli.cjs): a CommonJS start skips Node's ES module loader,
// and loads `node:` modules without building their namespaces, about 5 ms of a 40 ms command.
// It answers `--version` before it loads anything else, and hands every other command to
// launch.ts (in the same file, loaded on demand), which routes it.

const main = async (argv: string[]): Promise<number> => {
  if (nodeTooOld(process.versions.node)) {
    const major = MIN_NODE.split('.')[0];
    process.stderr.write(
      `niffler: needs Node.js ${MIN_NODE} or newer, and ${process.execPath} is ${process.version}; install Node ${major} (nodejs.org, or nvm install ${major}) and put it first on PATH\n`,
    );
    return 1;
  }
  const args = argv.slice(2);
  if (args.length === 1 && (args[0] === '--version' || args[0] === '-v')) {
    // By hand: no stream to make for one line (a closed pipe is the reader's choice).
    try {
      writeSync(1, `${VERSION}\n`);
    } catch {
      // EPIPE, or no stdout at all.
    }
    return 0;
  }
  return (await import('./launch.ts')).launch(argv);
};

main(process.argv).then(
  (code) => (process.exitCode = code),
  (error: unknown) => {
    // Only a broken install gets here (a bundle missing or unreadable): every command reports its
    // own errors.
    process.stderr.write(
      `niffler: could not load its own files; reinstall niffler (in a source checkout: npm run build)\n${error instanceof Error ? error.stack : String(error)}\n`,
    );
    process.exitCode = 1;
  },
);

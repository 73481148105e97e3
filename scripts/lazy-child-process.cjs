// commander requires node:child_process at load, for executable subcommands niffler has none of.
// Bundled in its place in dist/config.cjs, this defers loading it (and node:net, node:dgram… with
// it: a few ms of every config command) to a first use that never comes.
let childProcess;
module.exports = new Proxy(
  {},
  {
    get(_target, key) {
      childProcess ??= require('node:child_process');
      return childProcess[key];
    },
  },
);

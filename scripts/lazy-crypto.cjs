// vscode-jsonrpc/node requires `crypto` at load for one helper we never call (random pipe names).
// Bundled in its place, this defers loading node:crypto (~3 ms of every start) to first use.
let crypto;
module.exports = new Proxy(
  {},
  {
    get(_target, key) {
      crypto ??= require('node:crypto');
      return crypto[key];
    },
  },
);

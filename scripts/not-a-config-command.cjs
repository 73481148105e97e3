// What dist/config.cjs has in place of the commands it does not run (see build-options.mjs): the
// bin routes only the config commands and help there, so reaching this is niffler's own mistake.
throw new Error(
  'niffler routed a command to its config-only bundle (dist/config.cjs) that is not one; please report it',
);

import pkg from '../../package.json' with { type: 'json' };

/** niffler's version; the daemon and its front-ends compare it at their first exchange. */
export const VERSION: string = pkg.version;

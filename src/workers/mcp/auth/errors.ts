/**
 * An OAuth failure that restarting will not fix: `needs-auth` waits for the user (`niffler mcp
 * login NAME`), `refused` is a server we must not authorize against (a mismatched resource, a
 * scope it never grants). The connection shows it and does not restart on its own.
 */
export class AuthError extends Error {
  override name = 'AuthError';
  constructor(
    readonly kind: 'needs-auth' | 'refused',
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** The `AuthError` in `error` or its causes, if any. */
export const authErrorOf = (error: unknown): AuthError | undefined => {
  for (let e = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++)
    if (e instanceof AuthError) return e;
  return undefined;
};

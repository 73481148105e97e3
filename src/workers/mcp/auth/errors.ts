import {
  AuthorizationServerMismatchError,
  InsecureTokenEndpointError,
  IssuerMismatchError,
} from '@modelcontextprotocol/client';

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

/**
 * A failed authorization of `server`, worded for `mcp status`: what the SDK refused for the user's
 * safety (another issuer, a changed authorization server, a token endpoint without TLS, a resource
 * that is not this server) is `refused`; anything else says what failed.
 */
export const explainAuthFailure = (server: string, error: unknown): Error => {
  if (error instanceof AuthError) return error;
  const refused = (why: string) =>
    new AuthError('refused', `server "${server}": ${why}; refusing to authorize`, { cause: error });
  // Never the callback's error text here: after an issuer mismatch it is the attacker's.
  if (IssuerMismatchError.isInstance(error))
    return refused(
      error.kind === 'metadata'
        ? `its authorization server's metadata names another issuer (${JSON.stringify(error.received)}, expected ${JSON.stringify(error.expected)})`
        : 'the authorization response came from another issuer than the one asked (RFC 9207)',
    );
  if (AuthorizationServerMismatchError.isInstance(error))
    return refused('the authorization server changed between the redirect and the code exchange');
  if (InsecureTokenEndpointError.isInstance(error))
    return refused(`its token endpoint is not https (${error.tokenEndpoint})`);
  const message = error instanceof Error ? error.message : String(error);
  const mismatch = /^Protected resource (\S+) does not match expected (\S+)/.exec(message);
  if (mismatch)
    return refused(
      `its OAuth metadata names the resource ${mismatch[1]}, which is not this server (${mismatch[2]})`,
    );
  return new Error(`server "${server}": authorization failed: ${message}`, { cause: error });
};

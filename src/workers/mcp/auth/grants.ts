import { readFileSync } from 'node:fs';
import type { OAuthDiscoveryState } from '@modelcontextprotocol/client';
import type { McpOAuthSpec } from '../../protocol/mcp.ts';
import { crossAppGrant } from './cross-app.ts';
import { AuthError } from './errors.ts';

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/**
 * The workload's own JWT for the jwt-bearer grant: `oauth.assertion`, or the file in
 * `oauth.assertionFile`, read at each token request (platforms rotate it in place).
 */
const assertionOf = (spec: McpOAuthSpec, server: string): string => {
  if (spec.assertion) return spec.assertion;
  if (!spec.assertionFile)
    throw new AuthError(
      'refused',
      `server "${server}": oauth.grant jwt_bearer needs oauth.assertion or oauth.assertionFile`,
    );
  try {
    return readFileSync(spec.assertionFile, 'utf8').trim();
  } catch (error) {
    throw new AuthError(
      'refused',
      `server "${server}": cannot read oauth.assertionFile ${spec.assertionFile} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
      { cause: error },
    );
  }
};

/**
 * The token request of a machine grant: client credentials; cross-app access (SEP-990); or the
 * RFC 7523 jwt-bearer grant with the workload's own token (workload identity federation,
 * SEP-1933). None for the authorization-code flow (the SDK builds that one).
 */
export const machineGrant = async (
  spec: McpOAuthSpec,
  grant: NonNullable<McpOAuthSpec['grant']>,
  at: {
    server: string;
    serverUrl: string;
    discovery: OAuthDiscoveryState | undefined;
    scope: string | undefined;
  },
): Promise<URLSearchParams | undefined> => {
  const withScope = (params: URLSearchParams) => {
    if (at.scope) params.set('scope', at.scope);
    return params;
  };
  switch (grant) {
    case 'authorization_code':
      return undefined;
    case 'client_credentials':
      return withScope(new URLSearchParams({ grant_type: 'client_credentials' }));
    case 'jwt_bearer':
      return withScope(
        new URLSearchParams({ grant_type: JWT_BEARER, assertion: assertionOf(spec, at.server) }),
      );
    case 'cross_app':
      if (!spec.idp)
        throw new AuthError(
          'refused',
          `server "${at.server}": oauth.grant cross_app needs oauth.idp`,
        );
      return crossAppGrant(at.server, spec.idp, at.discovery, at.serverUrl, at.scope);
  }
};

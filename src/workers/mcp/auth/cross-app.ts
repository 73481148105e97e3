import type { OAuthDiscoveryState } from '@modelcontextprotocol/client';
import type { McpOAuthSpec } from '../../protocol/mcp.ts';
import { AuthError } from './errors.ts';

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const ID_TOKEN = 'urn:ietf:params:oauth:token-type:id_token';
const ID_JAG = 'urn:ietf:params:oauth:token-type:id-jag';

type Idp = NonNullable<McpOAuthSpec['idp']>;

/**
 * Cross-app access (SEP-990): exchanges the user's ID token at the identity provider for an
 * ID-JAG (RFC 8693, audience: the MCP server's authorization server, resource: the MCP server),
 * and returns the RFC 7523 jwt-bearer grant that presents it at that authorization server. The
 * SDK's token request then adds the client authentication and the `resource` indicator.
 */
export const crossAppGrant = async (
  server: string,
  idp: Idp,
  discovery: OAuthDiscoveryState | undefined,
  serverUrl: string,
  scope: string | undefined,
  fetchFn: typeof fetch = fetch,
): Promise<URLSearchParams> => {
  if (!discovery)
    throw new AuthError('refused', `server "${server}": no authorization server was discovered`);
  const audience =
    discovery.authorizationServerMetadata?.issuer ?? discovery.authorizationServerUrl;
  const resource = discovery.resourceMetadata?.resource ?? serverUrl;
  const body = new URLSearchParams({
    grant_type: TOKEN_EXCHANGE,
    requested_token_type: ID_JAG,
    subject_token: idp.idToken,
    subject_token_type: ID_TOKEN,
    audience,
    resource,
    client_id: idp.clientId,
  });
  if (idp.clientSecret) body.set('client_secret', idp.clientSecret);
  if (scope) body.set('scope', scope);
  const response = await fetchFn(idp.tokenEndpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body,
  });
  const reply = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (!response.ok || typeof reply['access_token'] !== 'string')
    throw new AuthError(
      'refused',
      `server "${server}": the identity provider refused the token exchange (HTTP ${response.status}${typeof reply['error'] === 'string' ? `, ${reply['error']}` : ''}${typeof reply['error_description'] === 'string' ? `: ${reply['error_description']}` : ''})`,
    );
  const grant = new URLSearchParams({ grant_type: JWT_BEARER, assertion: reply['access_token'] });
  if (scope) grant.set('scope', scope);
  return grant;
};

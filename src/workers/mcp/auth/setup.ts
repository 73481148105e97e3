import path from 'node:path';
import { withDpopFromProvider, type FetchLike } from '@modelcontextprotocol/client';
import type { McpServerSpec, McpTransportKind } from '../../protocol/mcp.ts';
import { authorizedFetch } from './fetch.ts';
import { ServerAuth, type AuthHooks } from './provider.ts';
import { AuthStore } from './store.ts';

/**
 * OAuth for one connection attempt of a remote (Streamable HTTP or SSE) server: its `ServerAuth`
 * and the fetch its transport uses. None for stdio and WebSocket, nor for a server configured
 * with a static `Authorization` header and no `oauth` section.
 */
export const serverAuthFor = (
  spec: McpServerSpec,
  kind: McpTransportKind,
  where: { root: string; authDir: string | undefined },
  hooks: AuthHooks,
): { auth: ServerAuth; fetch: FetchLike } | undefined => {
  if (!usesOAuth(spec, kind) || !spec.url) return undefined;
  const oauth = spec.oauth ?? {};
  const auth = new ServerAuth(
    spec.name,
    spec.url,
    {
      ...oauth,
      // Files are named relative to the workspace root.
      ...(oauth.privateKeyFile
        ? { privateKeyFile: path.resolve(where.root, oauth.privateKeyFile) }
        : {}),
      ...(oauth.assertionFile
        ? { assertionFile: path.resolve(where.root, oauth.assertionFile) }
        : {}),
    },
    new AuthStore(spec.url, where.authDir),
    hooks,
  );
  // DPoP innermost: it turns the Authorization our fetch sets into a DPoP one, with a proof.
  return { auth, fetch: authorizedFetch(auth, withDpopFromProvider(auth)(fetch)) };
};

/** Whether a connection of `spec` over `kind` authorizes with OAuth (see `serverAuthFor`). */
const usesOAuth = (spec: McpServerSpec, kind: McpTransportKind): boolean => {
  if ((kind !== 'http' && kind !== 'sse') || !spec.url) return false;
  const staticAuth = Object.keys(spec.headers ?? {}).some(
    (h) => h.toLowerCase() === 'authorization',
  );
  return !staticAuth || spec.oauth !== undefined;
};

/** The access token a connection of `spec` would present now (none stored, or no OAuth: none). */
export const storedAccessToken = (
  spec: McpServerSpec,
  kind: McpTransportKind,
  authDir: string | undefined,
): string | undefined =>
  usesOAuth(spec, kind) && spec.url && authDir
    ? new AuthStore(spec.url, authDir).get().tokens?.access_token
    : undefined;

import { extractWWWAuthenticateParams, type FetchLike } from '@modelcontextprotocol/client';
import type { Challenge, ServerAuth } from './provider.ts';
import { MAX_AUTHORIZATIONS } from './provider.ts';

/** A 401, or a 403 `insufficient_scope` (step-up), with what `WWW-Authenticate` asks for. */
const challengeOf = (response: Response): Challenge | undefined => {
  if (response.status !== 401 && response.status !== 403) return undefined;
  const { scope, resourceMetadataUrl, error } = extractWWWAuthenticateParams(response);
  if (response.status === 403 && error !== 'insufficient_scope') return undefined;
  return { scope, resourceMetadataUrl, stepUp: response.status === 403 };
};

const withBearer = (init: RequestInit | undefined, token: string): RequestInit => {
  const headers = new Headers(init?.headers);
  headers.set('authorization', `Bearer ${token}`);
  return { ...init, headers };
};

/**
 * The fetch of an OAuth-protected server's transport: sends the access token, and on a 401 or a
 * 403 `insufficient_scope` runs `auth.authorize()` (refresh, or the whole flow — the browser
 * included when someone started the server by hand) and sends the request again. Unlike the
 * SDK transports' own handling, a flow that needs the browser finishes here instead of failing
 * the request, so step-up works in the middle of a call.
 */
export const authorizedFetch =
  (auth: ServerAuth, base: FetchLike = fetch): FetchLike =>
  async (input, init) => {
    for (let round = 0; ; round++) {
      const sentWith = auth.generation;
      const token = auth.accessToken();
      const response = await base(input, token ? withBearer(init, token) : init);
      const challenge = challengeOf(response);
      if (!challenge) {
        // A notification's 202 says nothing about the token's scope.
        if (token && response.ok && response.status !== 202) auth.succeeded();
        return response;
      }
      if (round > MAX_AUTHORIZATIONS * 2) return response;
      await response.body?.cancel();
      await auth.authorize(challenge, sentWith, init?.signal ?? undefined);
    }
  };

import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import {
  auth,
  createPrivateKeyJwtAuth,
  IssuerMismatchError,
  type AddClientAuthentication,
  type DpopSession,
  type AuthOptions,
  type AuthResult,
  type OAuthClientInformationContext,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import type { McpOAuthSpec } from '../../protocol/mcp.ts';
import { machineGrant } from './grants.ts';
import { advertisesDpop, newDpopSession, storedDpopSession } from './dpop.ts';
import { AuthError, explainAuthFailure } from './errors.ts';
import { LoopbackReceiver } from './receiver.ts';
import type { AuthStore } from './store.ts';

/** How long a browser authorization may take before the server goes back to `needs-auth`. */
export const AUTH_WAIT_MS = 5 * 60_000;
/** Authorizations in a row that did not make the server answer (step-up included). */
export const MAX_AUTHORIZATIONS = 3;

/** What the connection around a `ServerAuth` provides and learns. */
export interface AuthHooks {
  /** True when the user may be sent to a browser now (a start by hand). */
  interactive: () => boolean;
  /** A browser authorization waits at `url`; `null` once it is over. */
  onAuthUrl: (url: string | null) => void;
  /** Authorization is needed and nobody can be asked: the server waits for `niffler mcp login`. */
  onNeedsAuth: (error: AuthError) => void;
}

/** What a 401, or a 403 `insufficient_scope`, asked for (`WWW-Authenticate`). */
export interface Challenge {
  scope?: string | undefined;
  resourceMetadataUrl?: URL | undefined;
  /** A 403 `insufficient_scope`: a refresh cannot help, only a new authorization. */
  stepUp?: boolean;
}

const portOf = (url: string | undefined): number | undefined => {
  if (!url) return undefined;
  try {
    const port = Number(new URL(url).port);
    return port > 0 ? port : undefined;
  } catch {
    return undefined;
  }
};

/**
 * The OAuth client of one remote server, on the SDK's `auth()` (discovery, registration, PKCE,
 * token and refresh requests): storage in an `AuthStore`, the loopback redirect receiver, the
 * machine grants (client credentials, cross-app access), and `authorize()` — one flow at a time,
 * at most `MAX_AUTHORIZATIONS` in a row.
 */
export class ServerAuth implements OAuthClientProvider {
  readonly clientMetadataUrl?: string;
  readonly addClientAuthentication?: AddClientAuthentication;
  /** Bumps with every new token, so a request can tell it was sent with an old one. */
  generation = 0;
  private readonly receiver: LoopbackReceiver;
  private readonly grant: NonNullable<McpOAuthSpec['grant']>;
  private verifier: string | undefined;
  private discovery: OAuthDiscoveryState | undefined;
  private code: Promise<{ code: string; iss?: string }> | undefined;
  private signal: AbortSignal | undefined;
  private pending: Promise<void> | undefined;
  private failures = 0;
  private published = false;
  /** During a step-up: the refresh token is not offered, so `auth()` asks for the new scope. */
  private hideRefresh = false;
  /** The authorization server names its issuer with another path on the server's origin. */
  private sameOriginIssuer = false;
  private dpopSession: Promise<DpopSession> | undefined;

  constructor(
    readonly server: string,
    readonly serverUrl: string,
    private readonly spec: McpOAuthSpec,
    private readonly store: AuthStore,
    private readonly hooks: AuthHooks,
  ) {
    this.grant = spec.grant ?? 'authorization_code';
    this.receiver = new LoopbackReceiver(server);
    if (spec.clientMetadataUrl) this.clientMetadataUrl = spec.clientMetadataUrl;
    if (spec.privateKeyFile && spec.clientId)
      this.addClientAuthentication = createPrivateKeyJwtAuth({
        issuer: spec.clientId,
        subject: spec.clientId,
        privateKey: readFileSync(spec.privateKeyFile, 'utf8'),
        alg: spec.signingAlgorithm ?? 'ES256',
      });
  }

  /** The access token to send, if any. */
  accessToken(): string | undefined {
    return this.store.get().tokens?.access_token;
  }

  /** A request with a token went through: the authorizations in a row start over. */
  succeeded(): void {
    this.failures = 0;
  }

  get redirectUrl(): string | undefined {
    if (this.grant !== 'authorization_code') return undefined;
    return (
      this.receiver.redirectUrl ??
      this.registeredRedirect() ??
      `http://127.0.0.1:${this.spec.redirectPort ?? 0}/callback`
    );
  }

  get clientMetadata(): OAuthClientMetadata {
    const scope = this.spec.scopes?.join(' ');
    const machine = this.grant !== 'authorization_code';
    return {
      client_name: 'niffler',
      redirect_uris: machine ? [] : [this.redirectUrl!],
      grant_types: machine ? [this.grant] : ['authorization_code', 'refresh_token'],
      response_types: machine ? [] : ['code'],
      ...(scope ? { scope } : {}),
    };
  }

  state(): string {
    return randomBytes(24).toString('base64url');
  }

  /** The configured client, stamped with the issuer asking (it is valid at any issuer). */
  private configuredClient(
    ctx: OAuthClientInformationContext | undefined,
  ): StoredOAuthClientInformation | undefined {
    const { clientId, clientSecret } = this.spec;
    if (!clientId) return undefined;
    return {
      client_id: clientId,
      ...(clientSecret ? { client_secret: clientSecret } : {}),
      ...(ctx ? { issuer: ctx.issuer } : {}),
    };
  }

  async clientInformation(
    ctx?: OAuthClientInformationContext,
  ): Promise<StoredOAuthClientInformation | undefined> {
    if (this.grant !== 'authorization_code' && !this.spec.clientId)
      throw new AuthError(
        'refused',
        `server "${this.server}": oauth.grant ${this.grant} needs oauth.clientId`,
      );
    if (!this.hooks.interactive()) {
      const known = this.configuredClient(ctx) ?? this.store.get(ctx?.issuer).client;
      if (!known) throw this.needsAuth();
      return known;
    }
    if (this.grant === 'authorization_code') await this.listen();
    return this.configuredClient(ctx) ?? this.store.get(ctx?.issuer).client;
  }

  saveClientInformation(
    client: StoredOAuthClientInformation,
    ctx?: OAuthClientInformationContext,
  ): void {
    // Configured credentials stay in the config; only registrations are stored.
    if (!this.spec.clientId) this.store.update({ client }, ctx?.issuer ?? client.issuer);
  }

  /** The tokens of `ctx.issuer` (SEP-2352); without a context, those saved last. */
  tokens(ctx?: OAuthClientInformationContext): StoredOAuthTokens | undefined {
    const tokens = this.store.get(ctx?.issuer).tokens;
    if (!tokens || !this.hideRefresh) return tokens;
    const { refresh_token: _hidden, ...rest } = tokens;
    return rest;
  }

  saveTokens(tokens: StoredOAuthTokens, ctx?: OAuthClientInformationContext): void {
    this.store.update(
      {
        tokens,
        expiresAt: tokens.expires_in ? Date.now() + tokens.expires_in * 1000 : undefined,
      },
      ctx?.issuer ?? tokens.issuer,
    );
    this.generation++;
  }

  redirectToAuthorization(url: URL): void {
    if (!this.hooks.interactive()) throw this.needsAuth();
    const state = url.searchParams.get('state') ?? '';
    // Wait for the browser before anyone can see the URL: a fast browser must find us waiting.
    this.code = this.receiver.waitForCode(
      state,
      AbortSignal.any([AbortSignal.timeout(AUTH_WAIT_MS), ...(this.signal ? [this.signal] : [])]),
    );
    this.code.catch(() => undefined); // observed by authorize()
    this.published = true;
    this.hooks.onAuthUrl(url.href);
  }

  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }

  codeVerifier(): string {
    if (!this.verifier) throw new Error('no PKCE code verifier was saved for this authorization');
    return this.verifier;
  }

  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    if (scope === 'all' || scope === 'client') this.store.update({ client: undefined });
    if (scope === 'all' || scope === 'tokens') this.store.clear('tokens');
    if (scope === 'all' || scope === 'verifier') this.verifier = undefined;
    if (scope === 'all' || scope === 'discovery') this.discovery = undefined;
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.discovery = state;
  }

  /**
   * A DPoP session (RFC 9449, SEP-1932) where the authorization server takes ES256 proofs — or
   * always with `oauth.dpop: true`, never with `false`: its tokens are then bound to a key kept
   * with them (a restart can use them). The SDK signs the token requests; `withDpopFromProvider`
   * under our fetch presents DPoP-bound tokens.
   */
  async dpop(): Promise<DpopSession | undefined> {
    if (this.spec.dpop === false) return undefined;
    const stored = this.store.get().dpop;
    if (stored) return (this.dpopSession ??= storedDpopSession(stored));
    if (this.spec.dpop !== true && !advertisesDpop(this.discovery)) return undefined;
    this.dpopSession ??= newDpopSession().then(({ session, stored: key }) => {
      this.store.update({ dpop: key });
      return session;
    });
    return this.dpopSession;
  }

  /** Lets the callback leg check it exchanges the code where the redirect went. */
  discoveryState(): OAuthDiscoveryState | undefined {
    return this.discovery;
  }

  /** The token request of a machine grant (none for the authorization-code flow). */
  async prepareTokenRequest(scope?: string): Promise<URLSearchParams | undefined> {
    return machineGrant(this.spec, this.grant, {
      server: this.server,
      serverUrl: this.serverUrl,
      discovery: this.discovery,
      scope,
    });
  }

  /**
   * Runs one authorization for `challenge`, unless another one finished since the request was
   * sent with token generation `sentWith` (then the caller just retries). Concurrent callers share
   * the flow in progress.
   */
  async authorize(challenge: Challenge, sentWith: number, signal?: AbortSignal): Promise<void> {
    if (this.pending) return this.pending;
    if (this.generation !== sentWith) return;
    if (this.failures >= MAX_AUTHORIZATIONS)
      throw new AuthError(
        'refused',
        `server "${this.server}" still refuses access after ${MAX_AUTHORIZATIONS} authorizations${challenge.scope ? ` (it asks for scope "${challenge.scope}")` : ''}; check the account's permissions, then run niffler mcp login ${this.server}`,
      );
    this.failures++;
    this.pending = this.run(challenge, signal).finally(() => (this.pending = undefined));
    return this.pending;
  }

  /** Ends a waiting browser flow and frees the loopback port. */
  close(): Promise<void> {
    return this.receiver.close();
  }

  private async run(challenge: Challenge, signal: AbortSignal | undefined): Promise<void> {
    this.store.reload(); // another daemon may have refreshed the tokens meanwhile
    // Discovered anew for each authorization: the server may name another authorization server
    // now (SEP-2352); the callback leg of this one checks against what this one found.
    this.discovery = undefined;
    if (challenge.stepUp && !this.hooks.interactive())
      // Only this request needs more; the server stays usable for the rest.
      throw new AuthError(
        'needs-auth',
        `server "${this.server}" needs more permissions for this request${challenge.scope ? ` (scope "${challenge.scope}")` : ''}; run niffler mcp login ${this.server}`,
      );
    this.signal = signal;
    this.hideRefresh = challenge.stepUp === true;
    const options = {
      serverUrl: this.serverUrl,
      ...(challenge.scope ? { scope: challenge.scope } : {}),
      ...(challenge.resourceMetadataUrl
        ? { resourceMetadataUrl: challenge.resourceMetadataUrl }
        : {}),
    };
    try {
      let result = await this.authTolerant(options);
      if (result === 'REDIRECT') {
        if (!this.code) throw new Error('the authorization flow did not start');
        const { code, iss } = await this.code;
        // `iss` from the redirect is checked against the issuer (RFC 9207) before the exchange.
        result = await this.authTolerant({
          ...options,
          authorizationCode: code,
          ...(iss ? { iss } : {}),
        });
      }
      if (result !== 'AUTHORIZED') throw this.needsAuth();
    } catch (error) {
      const explained = explainAuthFailure(this.server, error);
      if (explained instanceof AuthError && explained.kind === 'needs-auth')
        this.hooks.onNeedsAuth(explained);
      throw explained;
    } finally {
      this.code = this.signal = undefined;
      this.hideRefresh = false;
      if (this.published) {
        this.published = false;
        this.hooks.onAuthUrl(null);
      }
      await this.receiver.close();
    }
  }

  /**
   * The SDK's `auth()`, tolerating one misconfiguration: metadata whose `issuer` differs from the
   * URL it was fetched for only in its path, on the MCP server's own origin (2025-03-26 servers
   * that are their own authorization server often say `<origin>/oauth`). Another origin is another
   * operator: that mismatch is refused (RFC 8414 §3.3, the mix-up defence).
   */
  private async authTolerant(options: AuthOptions): Promise<AuthResult> {
    if (this.sameOriginIssuer)
      return auth(this, { ...options, skipIssuerMetadataValidation: true });
    try {
      return await auth(this, options);
    } catch (error) {
      if (!IssuerMismatchError.isInstance(error) || error.kind !== 'metadata') throw error;
      const origin = (url: string | undefined) => (url ? URL.parse(url)?.origin : undefined);
      if (origin(error.received) !== new URL(this.serverUrl).origin) throw error;
      this.sameOriginIssuer = true;
      return auth(this, { ...options, skipIssuerMetadataValidation: true });
    }
  }

  private needsAuth(): AuthError {
    return new AuthError(
      'needs-auth',
      `server "${this.server}" needs authorization; run niffler mcp login ${this.server}`,
    );
  }

  private registeredRedirect(): string | undefined {
    const client = this.store.get().client;
    return client && 'redirect_uris' in client ? client.redirect_uris[0] : undefined;
  }

  /** Starts the receiver on the configured port, else the registered one, else any free port. */
  private async listen(): Promise<void> {
    if (this.receiver.redirectUrl) return;
    const registered = this.registeredRedirect();
    const port = this.spec.redirectPort ?? portOf(registered) ?? 0;
    try {
      await this.receiver.listen(port);
    } catch (error) {
      if (this.spec.redirectPort !== undefined)
        throw new AuthError(
          'refused',
          `server "${this.server}": the redirect port ${port} (oauth.redirectPort) is in use`,
          { cause: error },
        );
      await this.receiver.listen(0);
    }
    // A registration made for another port cannot take this redirect: register again.
    if (registered && registered !== this.receiver.redirectUrl && !this.spec.clientId)
      this.store.update({ client: undefined });
  }
}

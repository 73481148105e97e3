import { createHash } from 'node:crypto';
import {
  DpopSession,
  generateDpopKeyPair,
  type DpopKeyPair,
  type OAuthDiscoveryState,
} from '@modelcontextprotocol/client';

/** A DPoP key kept with a server's credentials: DPoP-bound tokens need the key they were bound to. */
export interface StoredDpopKey {
  alg: 'ES256';
  privateJwk: JsonWebKey;
  publicJwk: JsonWebKey;
}

const ALG = 'ES256';
const EC = { name: 'ECDSA', namedCurve: 'P-256' } as const;

/** RFC 7638 thumbprint of a P-256 public key: SHA-256 over its required members, in order. */
const thumbprintOf = (jwk: JsonWebKey): string =>
  createHash('sha256')
    .update(JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y }))
    .digest('base64url');

/** True when the authorization server says it takes DPoP proofs signed with ES256 (RFC 9449 §5.1). */
export const advertisesDpop = (discovery: OAuthDiscoveryState | undefined): boolean => {
  const metadata = discovery?.authorizationServerMetadata as Record<string, unknown> | undefined;
  const algs = metadata?.['dpop_signing_alg_values_supported'];
  return Array.isArray(algs) && algs.includes(ALG);
};

/** A fresh DPoP session, and its key as it is stored (the private key leaves memory only 0600). */
export const newDpopSession = async (): Promise<{
  session: DpopSession;
  stored: StoredDpopKey;
}> => {
  const keyPair = await generateDpopKeyPair({ alg: ALG, extractable: true });
  const privateJwk = await crypto.subtle.exportKey('jwk', keyPair.privateKey);
  const session = await DpopSession.create({ keyPair });
  return { session, stored: { alg: ALG, privateJwk, publicJwk: keyPair.publicJwk } };
};

/** The DPoP session of a stored key. */
export const storedDpopSession = async (stored: StoredDpopKey): Promise<DpopSession> => {
  const [privateKey, publicKey] = await Promise.all([
    crypto.subtle.importKey('jwk', stored.privateJwk, EC, false, ['sign']),
    crypto.subtle.importKey('jwk', stored.publicJwk, EC, true, ['verify']),
  ]);
  const keyPair: DpopKeyPair = {
    privateKey,
    publicKey,
    publicJwk: stored.publicJwk,
    thumbprint: thumbprintOf(stored.publicJwk),
    alg: ALG,
  };
  return DpopSession.create({ keyPair });
};

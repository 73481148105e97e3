import type { EngineApi as EngineClient } from './deferred-client.ts';
import type { TrustOffer } from '../../main/protocol.ts';
import type { Dialog, DialogAnswer } from './state/types.ts';

interface TrustDeps {
  client: EngineClient;
  offer: TrustOffer;
  ask: (
    dialog: Omit<Extract<Dialog, { kind: 'trust' }>, 'id'>,
    fallback: DialogAnswer,
  ) => Promise<DialogAnswer>;
  notice: (level: 'info' | 'warn' | 'error', text: string) => void;
}

/**
 * A session opened in a repository that is not trusted: shows what trusting it would let in and,
 * if the user agrees, has the engine trust exactly that (its digest) and apply it.
 */
export const offerTrust = async ({ client, offer, ask, notice }: TrustDeps): Promise<void> => {
  if (offer.problem) {
    notice('error', offer.problem);
    return;
  }
  const answer = await ask({ kind: 'trust', offer }, { kind: 'trust', trust: false });
  if (answer.kind !== 'trust' || !answer.trust) {
    notice(
      'info',
      'repository not trusted: its servers, settings and prompt files stay unused (niffler trust to change that)',
    );
    return;
  }
  const accepted = await client.request('trust/accept', { digest: offer.digest });
  notice(
    accepted.ok ? 'info' : 'error',
    accepted.ok
      ? `trusted this repository${offer.servers.length ? `: starting ${offer.servers.map((s) => s.name).join(', ')}` : ''}`
      : `not trusted: ${accepted.error ?? 'unknown error'}`,
  );
};

import { expect } from 'vitest';
import type { Harness } from './harness.ts';

/** Trusts the harness's repository as it stands now (after reloading its config). */
export const trustRepo = async (h: Harness): Promise<void> => {
  await h.client.request('config/reload', {});
  const opened = await h.client.request('session/open', {});
  if (!opened.trust) return;
  expect(await h.client.request('trust/accept', { digest: opened.trust.digest })).toEqual({
    ok: true,
  });
};

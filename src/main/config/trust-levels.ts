// Imported by the command tree's help text: no imports here.

/**
 * Where a server stands, in every table, JSON field and message: the user's own (`yours`), a
 * repository's that the user trusted as it stands (`trusted`), never trusted (`untrusted`), or
 * trusted once and changed since (`changed`).
 */
export const TRUST_LEVELS = ['yours', 'trusted', 'untrusted', 'changed'] as const;
export type TrustLevel = (typeof TRUST_LEVELS)[number];

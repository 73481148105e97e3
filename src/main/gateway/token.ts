import { createHash, randomBytes } from 'node:crypto';
import { readStateFile, withStateLock, writeStateFile } from '../../workers/shared/state-file.ts';
import { NifflerError } from '../errors.ts';
import { tildify } from '../paths.ts';

/** The gateway's bearer token: its value, where it is kept, and whether it was just made. */
interface GatewayToken {
  token: string;
  file: string;
  created: boolean;
}

/** True for addresses that only this machine reaches. */
export const isLoopbackHost = (host: string): boolean =>
  host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);

/** The SHA-256 (hex) of a token: what the daemon is given and compares with. */
export const tokenDigest = (token: string): string =>
  createHash('sha256').update(token).digest('hex');

const refuse = (file: string, why: string): NifflerError =>
  new NifflerError(
    'usage',
    `${tildify(file)} cannot hold the gateway's token: ${why}; remove it (a new token is made) or fix it (chmod 600)`,
  );

/**
 * The token in `file`, or a new one (32 random bytes, base64url) written there 0600 when there is
 * none. A file that is not a private regular file of yours is refused, as is one others may read.
 */
export const gatewayToken = (file: string): GatewayToken =>
  withStateLock(file, () => {
    const read = readStateFile(file, 4096, true);
    if (read.kind === 'refused') throw refuse(file, read.why);
    if (read.kind === 'text') {
      const token = read.text.trim();
      if (token.length < 16) throw refuse(file, 'it holds less than 16 characters');
      return { token, file, created: false };
    }
    const token = randomBytes(32).toString('base64url');
    writeStateFile(file, `${token}\n`);
    return { token, file, created: true };
  });

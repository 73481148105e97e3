import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { newDpopSession, storedDpopSession } from '../../../src/workers/mcp/auth/dpop.ts';
import { machineGrant } from '../../../src/workers/mcp/auth/grants.ts';

const at = {
  server: 's',
  serverUrl: 'https://mcp.example.com',
  discovery: undefined,
  scope: 'read',
};

describe('machine grants', () => {
  it('jwt_bearer presents the workload token, read from its file at each request', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'niffler-wif-')), 'token');
    writeFileSync(file, 'eyJ.first\n');
    const grant = () => machineGrant({ assertionFile: file }, 'jwt_bearer', at);
    expect(Object.fromEntries((await grant())!)).toEqual({
      grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
      assertion: 'eyJ.first',
      scope: 'read',
    });
    writeFileSync(file, 'eyJ.rotated');
    expect((await grant())!.get('assertion')).toBe('eyJ.rotated');
    await expect(machineGrant({}, 'jwt_bearer', at)).rejects.toThrow(
      'oauth.grant jwt_bearer needs oauth.assertion or oauth.assertionFile',
    );
  });

  it('the authorization-code flow has no token request of ours', async () => {
    expect(await machineGrant({}, 'authorization_code', at)).toBeUndefined();
  });
});

describe('DPoP keys', () => {
  it('a stored key gives the same key back (tokens bound to it survive a restart)', async () => {
    const { session, stored } = await newDpopSession();
    const again = await storedDpopSession(JSON.parse(JSON.stringify(stored)));
    expect(again.thumbprint).toBe(session.thumbprint);
    const proof = await again.buildProof({ htm: 'POST', htu: 'https://mcp.example.com/mcp' });
    expect(proof.split('.')).toHaveLength(3);
  });
});

import { describe, expect, it } from 'vitest';
import {
  REDACTED,
  configSecrets,
  secretsKeeper,
  describeServer,
  redact,
  redactKnown,
  redactString,
} from '../../../src/main/config/redact.ts';

describe('redaction', () => {
  it('redacts env and header values, key-like keys and token-like strings', () => {
    const config = {
      models: { gpt: { provider: 'openai', model: 'gpt', apiKeyEnv: 'OPENAI_API_KEY' } },
      mcpServers: {
        gh: { url: 'https://x.test', headers: { Authorization: 'Bearer abc', 'X-Trace': 'plain' } },
        fs: {
          command: 'npx',
          args: ['--token', 'ghp_0123456789abcdefghij'],
          env: { HOME_DIR: '/home/me' },
        },
      },
      oauth: { clientSecret: 's3cret', clientId: 'public-id' },
    };
    expect(redact(config)).toEqual({
      models: { gpt: { provider: 'openai', model: 'gpt', apiKeyEnv: 'OPENAI_API_KEY' } },
      mcpServers: {
        gh: { url: 'https://x.test', headers: { Authorization: REDACTED, 'X-Trace': REDACTED } },
        fs: { command: 'npx', args: ['--token', REDACTED], env: { HOME_DIR: REDACTED } },
      },
      oauth: { clientSecret: REDACTED, clientId: 'public-id' },
    });
  });

  it.each([
    ['Authorization: Bearer abc.def', `Authorization: Bearer ${REDACTED}`],
    ['key sk-proj-abcdefghijkl in text', `key ${REDACTED} in text`],
    ['https://x.test/cb?code=xyz&state=1', `https://x.test/cb?code=${REDACTED}&state=1`],
    ['nothing secret here', 'nothing secret here'],
  ])('%s', (input, output) => expect(redactString(input)).toBe(output));

  it('describes a server by what it runs, with its secrets redacted (mcp list, trust)', () => {
    expect(
      describeServer({
        command: 'npx',
        args: ['server', 'ghp_abcdefghijklmnop1234'],
        env: { K: 'v' },
      }),
    ).toBe(`npx server ${REDACTED}`);
    expect(describeServer({ url: 'https://x.test/mcp?api_key=s3cret' })).toBe(
      `https://x.test/mcp?api_key=${REDACTED}`,
    );
  });

  it('lists the secret values of an expanded config, the token of a Bearer header alone too', () => {
    const secrets = configSecrets(
      {
        mcpServers: {
          gh: { url: 'https://x.test', headers: { Authorization: 'Bearer custom-token-1234' } },
          db: { command: 'db-mcp', env: { DB_PASSWORD: 'hunter2-long' } },
          idp: {
            url: 'https://y.test',
            oauth: {
              clientSecret: 'client-secret-55',
              idp: {
                tokenEndpoint: 'https://idp.test/token',
                clientId: 'app',
                clientSecret: 'idp-secret-66',
                idToken: 'id-token-abc',
              },
            },
          },
        },
        models: {
          gpt: {
            provider: 'openai',
            model: 'gpt',
            apiKeyEnv: 'OPENAI_API_KEY',
            toolProtocol: 'auto',
          },
          local: {
            provider: 'ollama',
            model: 'llama',
            headers: { 'X-Proxy-Key': 'proxy-key-77' },
            toolProtocol: 'auto',
          },
        },
      },
      { OPENAI_API_KEY: 'plain-api-key-0001' },
    );
    expect(new Set(secrets)).toEqual(
      new Set([
        'Bearer custom-token-1234',
        'custom-token-1234',
        'hunter2-long',
        'client-secret-55',
        'idp-secret-66',
        'id-token-abc',
        'proxy-key-77',
        'plain-api-key-0001',
      ]),
    );
    // Longest first: the whole header goes before the token inside it.
    expect(secrets.indexOf('Bearer custom-token-1234')).toBeLessThan(
      secrets.indexOf('custom-token-1234'),
    );
    expect(redactKnown('refused custom-token-1234 and plain-api-key-0001', secrets)).toBe(
      `refused ${REDACTED} and ${REDACTED}`,
    );
    expect(configSecrets(undefined, {})).toEqual([]);
  });

  it('keeps the secrets of earlier configs known after a reload drops them, once per config', () => {
    const keep = secretsKeeper({});
    const server = (token: string) => ({
      mcpServers: { gh: { url: 'https://x.test', headers: { Authorization: `Bearer ${token}` } } },
      models: {},
    });
    const first = server('first-token-1234');
    expect(keep(first)).toContain('first-token-1234');
    expect(keep(first)).toBe(keep(first));
    const second = keep(server('second-token-5678'));
    expect(second).toContain('second-token-5678');
    expect(second).toContain('first-token-1234');
    expect(keep(undefined)).toEqual(second);
  });
});

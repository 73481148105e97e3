import { redact, secretsFrom, serverSecretValues } from '../../workers/shared/redact.ts';
import type { Config } from './schema.ts';

export { REDACTED, redactKnown, redactString, redact } from '../../workers/shared/redact.ts';

/** What a server entry runs, secrets redacted: `command args…`, or its URL. */
export const describeServer = (definition: unknown): string => {
  const server = redact((definition ?? {}) as Record<string, unknown>);
  if (typeof server['command'] === 'string')
    return [server['command'], ...((server['args'] as string[] | undefined) ?? [])].join(' ');
  return typeof server['url'] === 'string' ? server['url'] : JSON.stringify(server);
};

/**
 * The secret values a config holds once expanded — server `env` and `headers`, OAuth client
 * secrets and identity-provider tokens, model `headers`, and the API keys its models name with `apiKeyEnv` — for `redactKnown`,
 * which catches them where no pattern would (an error message quoting a header, say).
 */
export const configSecrets = (
  config: Pick<Config, 'mcpServers' | 'models'> | undefined,
  env: Record<string, string | undefined>,
): string[] => {
  if (!config) return [];
  const values: (string | undefined)[] = [];
  for (const server of Object.values(config.mcpServers)) values.push(...serverSecretValues(server));
  for (const model of Object.values(config.models)) {
    values.push(...Object.values(model.headers ?? {}));
    if (model.apiKeyEnv) values.push(env[model.apiKeyEnv]);
  }
  return secretsFrom(values);
};

/**
 * The secrets of each config given, and of every config given before: a secret stays known after
 * a reload drops it (the old servers still log while they stop). Worked out once per config.
 */
export const secretsKeeper = (
  env: Record<string, string | undefined>,
): ((config: Parameters<typeof configSecrets>[0]) => string[]) => {
  let last: { config: Parameters<typeof configSecrets>[0]; values: string[] } | undefined;
  return (config) => {
    if (!last || last.config !== config)
      last = {
        config,
        values: secretsFrom([...configSecrets(config, env), ...(last?.values ?? [])]),
      };
    return last.values;
  };
};

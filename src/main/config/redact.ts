import type { Config } from './schema.ts';

/** What replaces a secret in every printed or logged form. */
export const REDACTED = '********';

const SECRET_KEY = /(key|token|secret|password|passwd|credential|auth|cookie|session|private)/i;
const SECRET_CONTAINERS = new Set(['env', 'headers']);
const SECRET_VALUE = /^(sk-|sk_|ghp_|gho_|ghs_|github_pat_|xox[abpr]-|AKIA|Bearer\s|Basic\s|eyJ)/;

/** True when a key, or the map it sits in, marks its value as a secret. */
export const isSecretKey = (key: string, parent?: string): boolean =>
  (parent !== undefined && SECRET_CONTAINERS.has(parent)) || SECRET_KEY.test(key);

/**
 * A deep copy of `value` with secrets replaced: every `env` and `headers` value, any key that
 * looks like a key, token or password (except `apiKeyEnv`, which names a variable), and strings
 * that look like well-known token formats.
 */
export const redact = <T>(value: T, parent?: string): T => {
  if (Array.isArray(value)) return value.map((item: unknown) => redact(item, parent)) as T;
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [
        key,
        key !== 'apiKeyEnv' &&
        isSecretKey(key, parent) &&
        (typeof item === 'string' || typeof item === 'number')
          ? REDACTED
          : redact(item, key),
      ]),
    ) as T;
  if (typeof value === 'string') return redactString(value) as T;
  return value;
};

/** Replaces token-looking parts of free text (log lines, error messages). */
export const redactString = (text: string): string =>
  SECRET_VALUE.test(text)
    ? REDACTED
    : text
        .replace(/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/g, `$1 ${REDACTED}`)
        .replace(
          /\b(sk-[A-Za-z0-9_-]{8,}|gh[pousr]_[A-Za-z0-9]{16,}|github_pat_[A-Za-z0-9_]{16,}|xox[abpr]-[A-Za-z0-9-]{8,})/g,
          REDACTED,
        )
        .replace(
          /([?&](?:access_token|token|key|api_key|apikey|code|client_secret)=)[^&\s]+/gi,
          `$1${REDACTED}`,
        );

/** Redacts the values of known secrets (e.g. expanded env values) wherever they appear in `text`. */
export const redactKnown = (text: string, secrets: Iterable<string>): string => {
  let out = text;
  for (const secret of secrets) if (secret.length >= 6) out = out.split(secret).join(REDACTED);
  return out;
};

/** What a server entry runs, secrets redacted: `command args…`, or its URL. */
export const describeServer = (definition: unknown): string => {
  const server = redact((definition ?? {}) as Record<string, unknown>);
  if (typeof server['command'] === 'string')
    return [server['command'], ...((server['args'] as string[] | undefined) ?? [])].join(' ');
  return typeof server['url'] === 'string' ? server['url'] : JSON.stringify(server);
};

/**
 * The secret values a config holds once expanded — server `env` and `headers`, OAuth client
 * secrets, model `headers`, and the API keys its models name with `apiKeyEnv` — for `redactKnown`,
 * which catches them where no pattern would (an error message quoting a header, say).
 */
export const configSecrets = (
  config: Pick<Config, 'mcpServers' | 'models'> | undefined,
  env: Record<string, string | undefined>,
): string[] => {
  if (!config) return [];
  const values: (string | undefined)[] = [];
  for (const server of Object.values(config.mcpServers)) {
    values.push(...Object.values(server.env ?? {}), ...Object.values(server.headers ?? {}));
    values.push(server.oauth?.clientSecret);
  }
  for (const model of Object.values(config.models)) {
    values.push(...Object.values(model.headers ?? {}));
    if (model.apiKeyEnv) values.push(env[model.apiKeyEnv]);
  }
  // A header's value is often `Bearer <token>`: the token alone is secret too.
  const secrets = values.flatMap((value) =>
    value ? [value, ...(/^(?:Bearer|Basic)\s+(\S+)$/i.exec(value)?.slice(1) ?? [])] : [],
  );
  // Longest first, so a value that contains another is replaced whole.
  return [...new Set(secrets)].sort((a, b) => b.length - a.length);
};

// Redaction of free text, shared by the daemon's log (src/main/log.ts) and the MCP worker's server
// logs: what replaces a secret, token-shaped strings, and known secret values.

/** What replaces a secret in every printed or logged form. */
export const REDACTED = '********';

/** Strings that are, as a whole, a well-known token format. */
const SECRET_VALUE = /^(sk-|sk_|ghp_|gho_|ghs_|github_pat_|xox[abpr]-|AKIA|Bearer\s|Basic\s|eyJ)/;

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

/** What an MCP server entry keeps secret, in the config's shape and the worker's spec alike. */
interface ServerSecrets {
  env?: Record<string, string>;
  headers?: Record<string, string>;
  oauth?: {
    clientSecret?: string;
    assertion?: string;
    idp?: { clientSecret?: string; idToken?: string };
  };
}

/** The secret values of a server entry: its env and header values, its OAuth secrets. */
export const serverSecretValues = (server: ServerSecrets): (string | undefined)[] => [
  ...Object.values(server.env ?? {}),
  ...Object.values(server.headers ?? {}),
  server.oauth?.clientSecret,
  server.oauth?.idp?.clientSecret,
  server.oauth?.idp?.idToken,
  server.oauth?.assertion,
];

/**
 * Secret values ready for `redactKnown`: without blanks or repeats, the token of a `Bearer <token>`
 * header alone too, longest first (so a value that contains another is replaced whole).
 */
export const secretsFrom = (values: Iterable<string | undefined>): string[] => {
  const secrets = [...values].flatMap((value) =>
    value ? [value, ...(/^(?:Bearer|Basic)\s+(\S+)$/i.exec(value)?.slice(1) ?? [])] : [],
  );
  return [...new Set(secrets)].sort((a, b) => b.length - a.length);
};

const SECRET_KEY =
  /(key|token|secret|password|passwd|credential|auth|cookie|session|private|assertion)/i;
const SECRET_CONTAINERS = new Set(['env', 'headers']);

/** True when a key, or the map it sits in, marks its value as a secret. */
const isSecretKey = (key: string, parent?: string): boolean =>
  (parent !== undefined && SECRET_CONTAINERS.has(parent)) || SECRET_KEY.test(key);

/**
 * A deep copy of `value` with secrets replaced: every `env` and `headers` value, any key that
 * looks like a key, token or password (except `apiKeyEnv`, which names a variable), the `known`
 * secret values wherever they appear in a string, and strings that look like well-known token
 * formats. Known values go first: a token pattern could take part of one and leave the rest.
 */
export const redact = <T>(value: T, known: readonly string[] = [], parent?: string): T => {
  if (Array.isArray(value)) return value.map((item: unknown) => redact(item, known, parent)) as T;
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [
        key,
        key !== 'apiKeyEnv' &&
        isSecretKey(key, parent) &&
        (typeof item === 'string' || typeof item === 'number')
          ? REDACTED
          : redact(item, known, key),
      ]),
    ) as T;
  if (typeof value === 'string') return redactString(redactKnown(value, known)) as T;
  return value;
};

/** Variables a child (bash, an MCP server) inherits from niffler; everything else must be named. */
const SAFE_ENV_KEYS = ['PATH', 'HOME', 'USER', 'LANG', 'TERM', 'SHELL', 'TMPDIR'] as const;

/**
 * The minimal environment of a child: `SAFE_ENV_KEYS` and the `pass` names taken from `from`,
 * then `configured` over them. Provider keys and tokens pass only when named.
 */
export const safeEnvironment = (
  configured: Record<string, string> = {},
  from: NodeJS.ProcessEnv = process.env,
  pass: readonly string[] = [],
): Record<string, string> => {
  const env: Record<string, string> = {};
  for (const key of [...SAFE_ENV_KEYS, ...pass]) {
    const value = from[key];
    // Exported shell functions (`() { …`) are how Shellshock travelled; never pass them on.
    if (value !== undefined && !value.startsWith('()')) env[key] = value;
  }
  return { ...env, ...configured };
};

import picomatch from 'picomatch';

/** Compiled patterns kept; past this many, the oldest go (patterns come from config files). */
const KEEP = 512;
const compiled = new Map<string, (name: string) => boolean>();

/**
 * Whether the tool name `name` matches `pattern` (`github__*`, `read_*`): equal, or a glob that
 * matches. The one place tool-name globs are matched — policy rules, a server's include and
 * exclude, an agent profile's tools. Each pattern is compiled once: `picomatch.isMatch` compiles
 * it anew on every call (~5 µs), and these run per tool, per rule, for every listing and call.
 */
export const matchesName = (name: string, pattern: string): boolean => {
  if (pattern === name) return true;
  if (!/[*?[{]/.test(pattern)) return false;
  let match = compiled.get(pattern);
  if (!match) {
    if (compiled.size >= KEEP) compiled.delete(compiled.keys().next().value!);
    compiled.set(pattern, (match = picomatch(pattern)));
  }
  return match(name);
};

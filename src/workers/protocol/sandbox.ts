/** Resource limits of a command and everything it starts; each is off when absent. */
export interface ResourceLimits {
  /** CPU seconds (RLIMIT_CPU): SIGXCPU, then SIGKILL. */
  cpuSeconds?: number;
  /** Writable private memory in MiB (RLIMIT_DATA: heap and anonymous mappings). */
  memoryMB?: number;
  /** Largest file it may write, in MiB (RLIMIT_FSIZE). */
  fileSizeMB?: number;
  /** Processes of the user it may reach (RLIMIT_NPROC); counts the user's other processes too. */
  processes?: number;
}

/** `auto` uses bubblewrap where it runs, `bwrap` requires it, `off` never sandboxes. */
export const SANDBOX_MODES = ['auto', 'bwrap', 'off'] as const;
export type SandboxMode = (typeof SANDBOX_MODES)[number];

/**
 * What a sandboxed command may touch. The filesystem is read-only except `write` and a private
 * `/tmp`; `hide` paths are replaced by empty ones; the network is cut unless `network`.
 */
export interface SandboxPolicy {
  /** Absolute paths bound read-write. */
  write: string[];
  /**
   * Absolute paths kept visible read-only even where the sandbox replaces what holds them (a
   * workspace under /tmp, which is private inside).
   */
  read?: string[];
  /** Absolute paths hidden (an empty directory, or an empty file, over each that exists). */
  hide: string[];
  network: boolean;
  /**
   * git's places inside `write` kept read-only (`gitPlaces`), when the caller found them already;
   * found here when absent.
   */
  protect?: string[];
  /** The user approved a git write: `.git` stays writable (niffler's own config does not). */
  gitWritable?: boolean;
}

/**
 * Whether bubblewrap runs here, found and tried once by the owner of a pool or worker:
 * its path, or why not.
 */
export type BwrapProbe = { ok: true; path: string } | { ok: false; reason: string };

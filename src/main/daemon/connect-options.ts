import type { Env } from '../paths.ts';

/** How a front-end reaches the daemon of a workspace (`connectDaemon`, and its in-process stand-in). */
export interface ConnectOptions {
  root: string;
  env?: Env;
  /** Start a daemon when none answers (default true). */
  start?: boolean;
  /** Shown in the daemon's log: which command connected. */
  client?: string;
  /** Told when a daemon is being started (for a progress line). */
  onStarting?: () => void;
  /** How long to wait for a daemon to start, in ms. */
  startTimeoutMs?: number;
}

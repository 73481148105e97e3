/** The levels of niffler's own logs (the daemon's, the workers'), quietest last. Config `logLevel`. */
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

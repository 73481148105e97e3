/** The exit code a command set, 0 when it set none. */
export const exitCode = (): number => (typeof process.exitCode === 'number' ? process.exitCode : 0);

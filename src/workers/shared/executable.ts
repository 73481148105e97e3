import { accessSync, constants, statSync } from 'node:fs';

/** Whether `file` is a regular file this process may execute (links followed). */
export const isExecutableFile = (file: string): boolean => {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
};

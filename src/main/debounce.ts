/** `fire` calls `run` once, `ms` after the last of a burst of calls; `cancel` drops a pending one. */
export const debounced = (run: () => void, ms: number) => {
  let timer: NodeJS.Timeout | undefined;
  return {
    fire: (): void => {
      clearTimeout(timer);
      timer = setTimeout(run, ms);
      timer.unref();
    },
    cancel: (): void => clearTimeout(timer),
  };
};

import { useEffect, useState } from 'react';

/** The current time, ticking every `ms` while `active` (spinners' elapsed times). */
export const useNow = (active: boolean, ms = 100): number => {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(timer);
  }, [active, ms]);
  return now;
};

/** A count of the event loop's turns (one setImmediate each), read by `now()` until `stop()`. */
export function turnCounter(): {now: () => number; stop: () => void} {
  let turn = 0;
  let ticking = true;
  const tick = (): void => {
    turn++;
    if (ticking) setImmediate(tick);
  };
  setImmediate(tick);
  return {now: () => turn, stop: () => void (ticking = false)};
}

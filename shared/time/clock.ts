// The clock every step reads and waits on. A run's ranks use the process's own (performance.now and timers);
// `zerowire simulate` runs every rank in one process and puts a virtual clock here (simulator/virtual-clock.ts),
// so the schemes' own code runs unchanged while time is the network model's and the device model's.

export interface Clock {
  /** Milliseconds on this clock (performance.now() on the real one). */
  now(): number;
  /** Resolves `ms` from now (at once for ms <= 0, after a turn of the loop). */
  sleep(ms: number): Promise<void>;
  /** One turn of the loop: what else is ready runs first. */
  turn(): Promise<void>;
}

/** Wait `ms` without holding the event loop: a timer for all but the last millisecond, then turns of the loop
 *  (I/O included) until the deadline, since timers round to whole milliseconds. */
async function idle(ms: number): Promise<void> {
  const end = performance.now() + ms;
  if (ms > 1.5) await new Promise((r) => setTimeout(r, ms - 1));
  while (performance.now() < end) await new Promise((r) => setImmediate(r));
}

const REAL: Clock = {
  now: () => performance.now(),
  sleep: idle,
  turn: () => new Promise<void>((r) => setImmediate(r)),
};

let current: Clock = REAL;

export const now = (): number => current.now();
export const sleep = (ms: number): Promise<void> => current.sleep(ms);
export const turn = (): Promise<void> => current.turn();

/** Run `body` on `clock`; the real clock is back when it settles. One at a time: a process simulates one run. */
export async function withClock<T>(clock: Clock, body: () => Promise<T>): Promise<T> {
  if (current !== REAL) throw new Error('a virtual clock is already in use in this process');
  current = clock;
  try {
    return await body();
  } finally {
    current = REAL;
  }
}

/**
 * The faults a soak run meets besides being killed, chosen per run by the seeded random: each run
 * starts with a clock that may be wrong (an NTP correction moves it between runs, forwards or
 * backwards), may meet a full disk while it runs, and ends with SIGKILL or SIGTERM.
 */

export interface RunPlan {
  /** the node's clock for the run, in slots from the system's (BEACON_GATEWAY_CLOCK_OFFSET_MS) */
  clockOffsetSlots: number;
  /** the beacon database's disk fills for a while during the run, then space returns */
  diskFull: boolean;
  /** how the run ends */
  stop: "SIGKILL" | "SIGTERM";
}

/** How far a wrong clock is off: past the gossip disparity, less than an epoch. */
export const CLOCK_FAULT_SLOTS = 3;

/** One run's faults: a wrong clock in 2 runs of 5 (ahead or behind), a full disk in 3 of 10 where one can be had, SIGTERM in 1 of 5. */
export function planRun(random: () => number, diskFullPossible: boolean): RunPlan {
  const clock = random();
  const clockOffsetSlots = clock < 0.2 ? CLOCK_FAULT_SLOTS : clock < 0.4 ? -CLOCK_FAULT_SLOTS : 0;
  const diskFull = diskFullPossible && random() < 0.3;
  const stop = random() < 0.2 ? "SIGTERM" : "SIGKILL";
  return {clockOffsetSlots, diskFull, stop};
}

/** What the soak counts of its faults. */
export interface FaultCounts {
  sigkill: number;
  sigterm: number;
  /** runs started with the clock moved forwards / backwards from the run before */
  clockForwards: number;
  clockBackwards: number;
  diskFull: number;
}

export function countFaults(counts: FaultCounts, plan: RunPlan, previousOffsetSlots: number): void {
  if (plan.clockOffsetSlots > previousOffsetSlots) counts.clockForwards++;
  if (plan.clockOffsetSlots < previousOffsetSlots) counts.clockBackwards++;
  if (plan.diskFull) counts.diskFull++;
}

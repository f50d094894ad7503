import type {BeaconConfig} from "@lodestar/config";
import {SLOTS_PER_EPOCH} from "@lodestar/params";
import {ClockOffsetMonitor, type ClockOffsetVerdict} from "../clock/offset.ts";
import {getLogger} from "../log.ts";

const log = getLogger("clock");

export interface ClockWatchDeps {
  config: BeaconConfig;
  /** ms since the start of `slot` by the node's clock (negative before it) */
  msIntoSlot(slot: number): number;
  /** with --metrics: the estimate, in seconds */
  setOffsetSeconds?(seconds: number): void;
}

/** What the estimate says: a clock right with the network's, late messages (this clock ahead or the network slow), or a clock certainly off. */
type Reading = "unknown" | "right" | "late" | "off";

function readingOf(verdict: ClockOffsetVerdict | null): Reading {
  return verdict === null ? "unknown" : verdict.off ? "off" : verdict.late ? "late" : "right";
}

/**
 * Watches the node's clock against its peers' (clock/offset.ts): peers' gossip blocks and
 * attestations are timed as they arrive, the estimate is taken once a slot, and each change of
 * what it says is said once, with the measured offset: the clock certainly off (the validators
 * stop), messages later than the network explains (the clock may be ahead, or the network slow:
 * the validators go on), the clock right again.
 */
export class ClockWatch {
  private readonly deps: ClockWatchDeps;
  private readonly monitor: ClockOffsetMonitor;
  private current: ClockOffsetVerdict | null = null;

  constructor(deps: ClockWatchDeps) {
    this.deps = deps;
    const {config} = deps;
    this.monitor = new ClockOffsetMonitor({
      toleranceMs: config.MAXIMUM_GOSSIP_CLOCK_DISPARITY,
      // honest peers send a slot's block and attestations by the attestation deadline; the
      // aggregation deadline leaves a busy node's delays room before a right clock reads as late
      latestSendMs: config.getAggregateDueMs(config.getForkName(0)),
      // no network that works delays every slot's first messages by an epoch: only a clock ahead does
      certainlyAheadMs: SLOTS_PER_EPOCH * config.SLOT_DURATION_MS,
    });
  }

  /** A peer's gossip block or attestation of `slot` arrived now: the returned function counts it (once it was not found invalid). */
  onArrival(peer: string, slot: number): () => void {
    const msIntoSlot = this.deps.msIntoSlot(slot);
    return () => this.monitor.record(peer, slot, msIntoSlot);
  }

  onPeerDisconnected(peer: string): void {
    this.monitor.forget(peer);
  }

  /** Once a slot, as the node's slot tick runs: the estimate, said when what it says changes. */
  onSlot(slot: number): void {
    // how late this tick runs is the node's own delay (clock/offset.ts), not its clock's
    this.monitor.recordTick(slot, this.deps.msIntoSlot(slot));
    const verdict = this.monitor.verdict(slot);
    const [was, now] = [readingOf(this.current), readingOf(verdict)];
    this.current = verdict;
    if (verdict) this.deps.setOffsetSeconds?.(verdict.offsetMs / 1000);
    if (now === was) return;
    if (!verdict) {
      // no peer's messages of the last slots: nothing is known of the clock now. Were a verdict
      // kept, a network whose nodes all judged their clocks off would stay silent for ever: no
      // one signs, so no message comes to change it
      if (was === "off") log.info({slot}, "no recent messages from peers to time the clock by: the node's validators sign again");
      return;
    }
    const {offsetMs, peers} = verdict;
    const context = {slot, offsetMs, toleranceMs: this.deps.config.MAXIMUM_GOSSIP_CLOCK_DISPARITY, peers};
    const arrive = `peers' blocks and attestations reach the node ${Math.abs(offsetMs)} ms ${offsetMs > 0 ? "after" : "before"} their slot starts by its clock`;
    if (now === "off") {
      log.warn(context, `the clock is off from the network's: ${arrive}. The node's validators sign nothing until it is right: check the system clock (NTP)`);
    } else if (now === "late") {
      log.warn(
        context,
        `messages from peers come late: ${arrive}, later than honest peers send. Either the clock is ahead or the network and its peers are slow (the two look alike from here): the node's validators go on signing. Check the system clock (NTP)`
      );
    } else if (was === "off" || was === "late") {
      log.info({slot, offsetMs, peers}, `the clock agrees with the network's again${was === "off" ? ": the node's validators sign again" : ""}`);
    }
  }

  /** The last estimate, or null before there is one. */
  verdict(): ClockOffsetVerdict | null {
    return this.current;
  }
}

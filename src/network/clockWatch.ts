import type {BeaconConfig} from "@lodestar/config";
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

/**
 * Watches the node's clock against its peers' (clock/offset.ts): peers' gossip blocks and
 * attestations are timed as they arrive, the estimate is taken once a slot, and a clock off by
 * more than MAXIMUM_GOSSIP_CLOCK_DISPARITY beyond what the network explains is said once, with the
 * measured offset, and once again when it is right again.
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
      // aggregation deadline leaves a busy node's delays room before a right clock reads as ahead
      latestSendMs: config.getAggregateDueMs(config.getForkName(0)),
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

  /** Once a slot, as the node's slot tick runs: the estimate, said when the clock turns out off and when it is right again. */
  onSlot(slot: number): void {
    // how late this tick runs is the node's own delay (clock/offset.ts), not its clock's
    this.monitor.recordTick(slot, this.deps.msIntoSlot(slot));
    const verdict = this.monitor.verdict(slot);
    if (!verdict) {
      // no peer's messages of the last slots: nothing is known of the clock now. Were the verdict
      // kept, a network whose nodes all judged their clocks off (all of them starved of CPU) would
      // stay silent for ever: no one signs, so no message comes to change it
      if (this.current?.off) log.info({slot}, "no recent messages from peers to time the clock by: the node's validators sign again");
      this.current = null;
      return;
    }
    const wasOff = this.current?.off ?? false;
    this.current = verdict;
    this.deps.setOffsetSeconds?.(verdict.offsetMs / 1000);
    const tolerance = this.deps.config.MAXIMUM_GOSSIP_CLOCK_DISPARITY;
    if (verdict.off && !wasOff) {
      log.warn(
        {slot, offsetMs: verdict.offsetMs, toleranceMs: tolerance, peers: verdict.peers},
        `the clock is off from the network's: peers' blocks and attestations reach the node ${verdict.offsetMs} ms ${verdict.offsetMs > 0 ? "after" : "before"} their slot starts by its clock. The node's validators sign nothing until it is right: check the system clock (NTP)`
      );
    } else if (!verdict.off && wasOff) {
      log.info({slot, offsetMs: verdict.offsetMs, peers: verdict.peers}, "the clock agrees with the network's again: the node's validators sign again");
    }
  }

  /** The last estimate, or null before there is one. */
  verdict(): ClockOffsetVerdict | null {
    return this.current;
  }
}

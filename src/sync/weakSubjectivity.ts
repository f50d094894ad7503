import type {ChainForkConfig} from "@lodestar/config";
import {SLOTS_PER_EPOCH} from "@lodestar/params";
import {type BeaconStateAllForks, computeWeakSubjectivityPeriod} from "@lodestar/state-transition";
import {toRootHex} from "@lodestar/utils";

/**
 * Weak subjectivity (consensus specs phase0 and electra weak-subjectivity.md): a node that starts
 * from a checkpoint state trusts it, and the state must be recent enough that the validators who
 * finalized it cannot since have exited and built another chain without being slashed.
 */

/** The node will not start from this checkpoint state: the message says why and what to do (no stack trace is printed). */
export class StartRefused extends Error {
  override name = "StartRefused";
}

/** `--wss-checkpoint ROOT:EPOCH`: the finalized checkpoint the operator trusts (block root, 0x hex, and epoch). */
export interface WssCheckpoint {
  root: string;
  epoch: number;
}

/** The anchor a checkpoint state gives: its checkpoint epoch and the root of its latest block. */
export interface AnchorCheckpoint {
  epoch: number;
  blockRoot: Uint8Array;
}

/** Throws, naming both, when the served anchor is not the trusted checkpoint. */
export function checkWssCheckpoint(anchor: AnchorCheckpoint, wss: WssCheckpoint, url: string): void {
  const served = toRootHex(anchor.blockRoot);
  if (anchor.epoch === wss.epoch && served === wss.root.toLowerCase()) return;
  throw new StartRefused(
    `checkpoint sync: ${url} served the checkpoint of epoch ${anchor.epoch}, block root ${served}, ` +
      `but --wss-checkpoint trusts epoch ${wss.epoch}, block root ${wss.root}: refusing to start from it ` +
      "(check the checkpoint with another node or an explorer, and the URL)"
  );
}

/**
 * Throws when the state is older than the weak subjectivity period at the wall-clock epoch
 * (`is_within_weak_subjectivity_period`: current_epoch <= ws_state_epoch + ws_period, the
 * period by `compute_weak_subjectivity_period` of the state's fork, electra's from electra on).
 */
export function ensureWithinWeakSubjectivityPeriod(config: ChainForkConfig, state: BeaconStateAllForks, nowSeconds: number): {period: number; currentEpoch: number} {
  const stateEpoch = Math.floor(state.slot / SLOTS_PER_EPOCH);
  const period = computeWeakSubjectivityPeriod(config, state);
  const currentEpoch = Math.max(0, Math.floor((nowSeconds - state.genesisTime) / config.SECONDS_PER_SLOT / SLOTS_PER_EPOCH));
  if (currentEpoch > stateEpoch + period) {
    throw new StartRefused(
      `checkpoint sync: the state of epoch ${stateEpoch} is older than the weak subjectivity period (${period} epochs) at the current epoch ${currentEpoch}: ` +
        "the validators that finalized it may have exited since, so it proves nothing about today's chain; start from a recent finalized checkpoint"
    );
  }
  return {period, currentEpoch};
}

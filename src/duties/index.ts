import {
  type BeaconStateAllForks,
  type CachedBeaconStateAllForks,
  computeEpochAtSlot,
  computeStartSlotAtEpoch,
  getBlockRootAtSlot,
} from "@lodestar/state-transition";
import {ssz, type Root} from "@lodestar/types";

/**
 * Validator duties as pure functions over a state: the caller picks a state whose epoch caches
 * cover the requested epoch (see each function), this module reads them.
 */

export interface ProposerDuty {
  pubkey: Uint8Array;
  validatorIndex: number;
  slot: number;
}

export interface AttesterDuty {
  pubkey: Uint8Array;
  validatorIndex: number;
  committeeIndex: number;
  committeeLength: number;
  committeesAtSlot: number;
  validatorCommitteeIndex: number;
  slot: number;
}

export interface SyncDuty {
  pubkey: Uint8Array;
  validatorIndex: number;
  validatorSyncCommitteeIndices: number[];
}

const GENESIS_SLOT = 0;

/** The root of the latest block applied to `state` (its header, with the state root filled in while still zero). */
export function latestBlockRoot(state: BeaconStateAllForks): Root {
  const header = state.latestBlockHeader.toValue();
  if (header.stateRoot.every((b) => b === 0)) header.stateRoot = state.hashTreeRoot();
  return ssz.phase0.BeaconBlockHeader.hashTreeRoot(header);
}

/**
 * `get_block_root_at_slot` as the duty dependent roots use it: a slot before genesis means the
 * genesis block, and a slot at or after the state's own slot means the state's latest block
 * (no later block exists on the chain the state belongs to).
 */
export function blockRootAtSlot(state: BeaconStateAllForks, slot: number): Root {
  const target = Math.max(slot, GENESIS_SLOT);
  // asked on every duties request: read from the state's tree once per state and slot (a state is not changed once made)
  let bySlot = blockRootsAt.get(state);
  if (!bySlot) blockRootsAt.set(state, (bySlot = new Map()));
  let root = bySlot.get(target);
  if (!root) bySlot.set(target, (root = target >= state.slot ? latestBlockRoot(state) : getBlockRootAtSlot(state, target)));
  return root;
}
const blockRootsAt = new WeakMap<BeaconStateAllForks, Map<number, Root>>();

function pubkeyOf(state: BeaconStateAllForks, index: number): Uint8Array {
  return state.validators.getReadonly(index).pubkey;
}

/** Proposers of every slot of `epoch`, which must be the state's epoch. The genesis slot has no proposal. */
export function proposerDuties(state: CachedBeaconStateAllForks, epoch: number): ProposerDuty[] {
  const stateEpoch = computeEpochAtSlot(state.slot);
  if (stateEpoch !== epoch) throw new Error(`proposer duties of epoch ${epoch} need a state of that epoch, not ${stateEpoch}`);
  const startSlot = computeStartSlotAtEpoch(epoch);
  return state.epochCtx
    .getBeaconProposers()
    .map((validatorIndex, i) => ({pubkey: pubkeyOf(state, validatorIndex), validatorIndex, slot: startSlot + i}))
    .filter((duty) => duty.slot !== GENESIS_SLOT);
}

/** `get_block_root_at_slot(state, compute_start_slot_at_epoch(epoch) - 1)`, or the genesis block on underflow. */
export function proposerDependentRoot(state: BeaconStateAllForks, epoch: number): Root {
  return blockRootAtSlot(state, computeStartSlotAtEpoch(epoch) - 1);
}

/** Attestation duties of `indices` in `epoch`, which must be the state's previous, current or next epoch. */
export function attesterDuties(state: CachedBeaconStateAllForks, epoch: number, indices: number[]): AttesterDuty[] {
  const unique = [...new Set(indices)];
  const assignments = state.epochCtx.getCommitteeAssignments(epoch, unique);
  return unique.flatMap((index) => {
    const duty = assignments.get(index);
    return duty ? [{...duty, pubkey: pubkeyOf(state, index)}] : [];
  });
}

/** `get_block_root_at_slot(state, compute_start_slot_at_epoch(epoch - 1) - 1)`, or the genesis block on underflow. */
export function attesterDependentRoot(state: BeaconStateAllForks, epoch: number): Root {
  return blockRootAtSlot(state, computeStartSlotAtEpoch(epoch - 1) - 1);
}

/** Sync committee positions of `indices` in the committee of `epoch`'s period (the state's period or the next). */
export function syncCommitteeDuties(state: CachedBeaconStateAllForks, epoch: number, indices: number[]): SyncDuty[] {
  const committee = state.epochCtx.getIndexedSyncCommitteeAtEpoch(epoch);
  return [...new Set(indices)].flatMap((index) => {
    const positions = committee.validatorIndexMap.get(index);
    return positions && positions.length > 0 ? [{pubkey: pubkeyOf(state, index), validatorIndex: index, validatorSyncCommitteeIndices: positions}] : [];
  });
}

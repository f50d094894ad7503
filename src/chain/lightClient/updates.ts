import {computeSyncPeriodAtSlot} from "@lodestar/state-transition";
import type {LightClientFinalityUpdate, LightClientOptimisticUpdate, LightClientUpdate, altair} from "@lodestar/types";

/** Ranking and shapes of light-client updates, as altair/light-client/sync-protocol.md and full-node.md define them. */

export function participants(syncAggregate: altair.SyncAggregate): number {
  return syncAggregate.syncCommitteeBits.getTrueBitIndexes().length;
}

const isZeroBranch = (branch: Uint8Array[]): boolean => branch.every((node) => node.every((b) => b === 0));

/** `is_sync_committee_update` */
export const isSyncCommitteeUpdate = (update: LightClientUpdate): boolean => !isZeroBranch(update.nextSyncCommitteeBranch);
/** `is_finality_update` */
export const isFinalityUpdate = (update: Pick<LightClientUpdate, "finalityBranch">): boolean => !isZeroBranch(update.finalityBranch);

/** `is_better_update(new_update, old_update)` */
export function isBetterUpdate(newUpdate: LightClientUpdate, oldUpdate: LightClientUpdate): boolean {
  const max = newUpdate.syncAggregate.syncCommitteeBits.bitLen;
  const newActive = participants(newUpdate.syncAggregate);
  const oldActive = participants(oldUpdate.syncAggregate);
  const newSupermajority = newActive * 3 >= max * 2;
  const oldSupermajority = oldActive * 3 >= max * 2;
  if (newSupermajority !== oldSupermajority) return newSupermajority;
  if (!newSupermajority && newActive !== oldActive) return newActive > oldActive;

  const relevantCommittee = (u: LightClientUpdate) =>
    isSyncCommitteeUpdate(u) && computeSyncPeriodAtSlot(u.attestedHeader.beacon.slot) === computeSyncPeriodAtSlot(u.signatureSlot);
  if (relevantCommittee(newUpdate) !== relevantCommittee(oldUpdate)) return relevantCommittee(newUpdate);

  const newFinality = isFinalityUpdate(newUpdate);
  if (newFinality !== isFinalityUpdate(oldUpdate)) return newFinality;
  if (newFinality) {
    const committeeFinality = (u: LightClientUpdate) =>
      computeSyncPeriodAtSlot(u.finalizedHeader.beacon.slot) === computeSyncPeriodAtSlot(u.attestedHeader.beacon.slot);
    if (committeeFinality(newUpdate) !== committeeFinality(oldUpdate)) return committeeFinality(newUpdate);
  }

  if (newActive !== oldActive) return newActive > oldActive;
  if (newUpdate.attestedHeader.beacon.slot !== oldUpdate.attestedHeader.beacon.slot) {
    return newUpdate.attestedHeader.beacon.slot < oldUpdate.attestedHeader.beacon.slot;
  }
  return newUpdate.signatureSlot < oldUpdate.signatureSlot;
}

/** `create_light_client_finality_update(update)` */
export function toFinalityUpdate(update: LightClientUpdate): LightClientFinalityUpdate {
  const {attestedHeader, finalizedHeader, finalityBranch, syncAggregate, signatureSlot} = update;
  return {attestedHeader, finalizedHeader, finalityBranch, syncAggregate, signatureSlot} as LightClientFinalityUpdate;
}

/** `create_light_client_optimistic_update(update)` */
export function toOptimisticUpdate(update: LightClientUpdate): LightClientOptimisticUpdate {
  const {attestedHeader, syncAggregate, signatureSlot} = update;
  return {attestedHeader, syncAggregate, signatureSlot} as LightClientOptimisticUpdate;
}

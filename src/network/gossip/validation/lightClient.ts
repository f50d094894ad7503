import type {ChainConfig} from "@lodestar/config";
import type {ForkName} from "@lodestar/params";
import {sszTypesFor, type LightClientFinalityUpdate, type LightClientOptimisticUpdate, type altair} from "@lodestar/types";
import {participants} from "../../../chain/lightClient/updates.ts";
import {clockDisparityMs} from "./timing.ts";
import {type GossipValidatorDeps, type GossipValidatorFn, accept, ignore} from "./types.ts";

/**
 * light_client_finality_update and light_client_optimistic_update (altair/light-client/p2p-interface.md),
 * the rules for full nodes: newer than every update forwarded before, received once the block at
 * `signature_slot` had time to propagate (`get_sync_message_due_ms`), and exactly the update this
 * node computed itself. Every failure is an IGNORE: nothing here proves the sender wrong.
 */

const BASIS_POINTS = 10_000;

/** `get_sync_message_due_ms`: when, into a slot, its block has had time to propagate (a third of the slot). */
export function syncMessageDueMs(config: Pick<ChainConfig, "SYNC_MESSAGE_DUE_BPS" | "SLOT_DURATION_MS">): number {
  return Math.floor((config.SYNC_MESSAGE_DUE_BPS * config.SLOT_DURATION_MS) / BASIS_POINTS);
}

/** `get_sync_message_due_ms` has passed since the start of `signatureSlot`, within the clock disparity. */
function propagated(deps: GossipValidatorDeps, signatureSlot: number): boolean {
  return deps.clock.msIntoSlot(signatureSlot) + clockDisparityMs(deps) >= syncMessageDueMs(deps.config);
}

function hasSupermajority(syncAggregate: altair.SyncAggregate): boolean {
  return participants(syncAggregate) * 3 > syncAggregate.syncCommitteeBits.bitLen * 2;
}

/** Whether the message, read with its topic's fork type, is byte for byte the local update of `local.fork`. */
function sameAsLocal(typeName: "LightClientFinalityUpdate" | "LightClientOptimisticUpdate", topicFork: ForkName, message: unknown, local: {fork: ForkName; value: unknown} | null): boolean {
  if (!local || local.fork !== topicFork) return false;
  const type = (sszTypesFor(topicFork) as unknown as Record<string, {serialize(v: unknown): Uint8Array}>)[typeName];
  return Buffer.from(type.serialize(message)).equals(Buffer.from(type.serialize(local.value)));
}

export function createLightClientFinalityUpdateValidator(deps: GossipValidatorDeps): GossipValidatorFn {
  let forwarded: {finalizedSlot: number; supermajority: boolean} | null = null;
  return async (topic, message) => {
    const update = message as LightClientFinalityUpdate;
    const finalizedSlot = update.finalizedHeader.beacon.slot;
    const supermajority = hasSupermajority(update.syncAggregate);
    if (forwarded && !(finalizedSlot > forwarded.finalizedSlot || (finalizedSlot === forwarded.finalizedSlot && supermajority && !forwarded.supermajority))) {
      return ignore(`finalized slot ${finalizedSlot} is not newer than the forwarded ${forwarded.finalizedSlot} (or brings no new supermajority)`);
    }
    if (!propagated(deps, update.signatureSlot)) return ignore(`received before the block at signature slot ${update.signatureSlot} had time to propagate`);
    if (!sameAsLocal("LightClientFinalityUpdate", topic.boundary.fork, update, deps.chain.lightClient?.getFinalityUpdate() ?? null)) {
      return ignore("not the finality update this node computed");
    }
    forwarded = {finalizedSlot, supermajority};
    return accept("the node's own latest finality update");
  };
}

export function createLightClientOptimisticUpdateValidator(deps: GossipValidatorDeps): GossipValidatorFn {
  let forwardedAttestedSlot = -1;
  return async (topic, message) => {
    const update = message as LightClientOptimisticUpdate;
    const attestedSlot = update.attestedHeader.beacon.slot;
    if (attestedSlot <= forwardedAttestedSlot) return ignore(`attested slot ${attestedSlot} is not newer than the forwarded ${forwardedAttestedSlot}`);
    if (!propagated(deps, update.signatureSlot)) return ignore(`received before the block at signature slot ${update.signatureSlot} had time to propagate`);
    if (!sameAsLocal("LightClientOptimisticUpdate", topic.boundary.fork, update, deps.chain.lightClient?.getOptimisticUpdate() ?? null)) {
      return ignore("not the optimistic update this node computed");
    }
    forwardedAttestedSlot = attestedSlot;
    return accept("the node's own latest optimistic update");
  };
}

import type {GossipType} from "./topics.ts";

/**
 * Messages of a type validated at once; past this, new ones are ignored rather than queued without
 * bound, and one type's flood never crowds out another's (a block is never ignored for the
 * attestations in validation). Single attestations come in tens of thousands a slot to a node on
 * every subnet, most within a second or two of each other, and are worth validating for the rest
 * of the slot: they wait for the BLS threads rather than be dropped at 1,024 while the threads
 * have half the slot free (bench:gossip). A slot's single attestations at mainnet's scale (31,250
 * for a million validators) all fit: at 16,384 (Lighthouse's queue) a node whose event loop takes
 * them in faster than its BLS thread checks them ignored hundreds to a thousand a slot
 * (bench:gossip); Lodestar's queue holds 24,576. The others are Lighthouse's sizes.
 * (No lodestar import here: bench:gossip's report reads these before the preset is fixed.)
 */
export const MAX_VALIDATIONS_IN_FLIGHT: Partial<Record<GossipType, number>> = {
  beacon_attestation: 32_768,
  beacon_aggregate_and_proof: 4_096,
  sync_committee: 4_096,
};
export const DEFAULT_MAX_VALIDATIONS_IN_FLIGHT = 1_024;

export function maxValidationsInFlight(type: GossipType): number {
  return MAX_VALIDATIONS_IN_FLIGHT[type] ?? DEFAULT_MAX_VALIDATIONS_IN_FLIGHT;
}

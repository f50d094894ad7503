import {ForkSeq, GENESIS_SLOT} from "@lodestar/params";
import {
  type CachedBeaconStateAllForks,
  computeAttestationsRewards,
  computeBlockRewards,
  computeStartSlotAtEpoch,
  computeSyncCommitteeRewards,
} from "@lodestar/state-transition";
import type {BeaconBlock} from "@lodestar/types";
import type {IBeaconChain} from "../../chain/interface.ts";
import type {BlockId, ValidatorId} from "../codecs.ts";
import {badRequest, notFound} from "../errors.ts";
import type {rewardRoutes} from "../routes/rewards.ts";
import type {Handlers} from "../routes/types.ts";
import type {ApiContext} from "./context.ts";
import {indicesOf, resolveBlock, resolveState} from "./resolve.ts";

/** Handlers of the rewards routes, over lodestar's reward computations (altair and later). */

function assertAltair(chain: IBeaconChain, slot: number, what: string): void {
  if (chain.config.getForkSeq(slot) < ForkSeq.altair) throw badRequest(`${what} are not available before altair (slot ${slot} is ${chain.config.getForkName(slot)})`);
}

/**
 * A block by id and the state it was applied to (404 when either is unknown), or, for the genesis
 * block, which was applied to no state and so earned nothing, `preState` null and the genesis state.
 */
async function blockWithPreState(chain: IBeaconChain, id: BlockId, what: string) {
  const {block, executionOptimistic, finalized} = await resolveBlock(chain, id);
  assertAltair(chain, block.message.slot, what);
  if (block.message.slot === GENESIS_SLOT) {
    const genesisState = await chain.getStateBySlot(GENESIS_SLOT);
    if (!genesisState) throw notFound("The genesis state is not available");
    return {block: block.message as BeaconBlock, preState: null, genesisState, meta: {executionOptimistic, finalized}};
  }
  const preState = await chain.getBlockPreState(block.message);
  if (!preState) throw notFound(`The state before block at slot ${block.message.slot} is not available`);
  return {block: block.message as BeaconBlock, preState, genesisState: null, meta: {executionOptimistic, finalized}};
}

/** The genesis block's sync committee rewards: each member of the genesis sync committee, once, with 0. */
function genesisSyncCommitteeRewards(genesisState: CachedBeaconStateAllForks): {validatorIndex: number; reward: number}[] {
  return [...new Set(genesisState.epochCtx.currentSyncCommitteeIndexed.validatorIndices)].map((validatorIndex) => ({validatorIndex, reward: 0}));
}

/** Keeps the entries of the validators `ids` names (all when `ids` is empty; unknown ids name none). */
function forValidators<T extends {validatorIndex: number}>(state: CachedBeaconStateAllForks, ids: ValidatorId[], entries: T[]): T[] {
  if (ids.length === 0) return entries;
  const wanted = new Set(indicesOf(state, ids));
  return entries.filter((e) => wanted.has(e.validatorIndex));
}

export const rewardHandlers: Handlers<typeof rewardRoutes, ApiContext> = {
  async getBlockRewards({blockId}, {chain}) {
    const {block, preState, meta} = await blockWithPreState(chain, blockId, "Block rewards");
    if (!preState) {
      const zero = {total: 0, attestations: 0, syncAggregate: 0, proposerSlashings: 0, attesterSlashings: 0};
      return {data: {proposerIndex: block.proposerIndex, ...zero}, meta};
    }
    return {data: await computeBlockRewards(chain.config, block, preState), meta};
  },

  async getSyncCommitteeRewards({blockId, ids}, {chain}) {
    const {block, preState, genesisState, meta} = await blockWithPreState(chain, blockId, "Sync committee rewards");
    if (!preState) return {data: forValidators(genesisState, ids, genesisSyncCommitteeRewards(genesisState)), meta};
    const rewards = await computeSyncCommitteeRewards(chain.config, preState.epochCtx.pubkeyCache, block, preState);
    return {data: forValidators(preState, ids, rewards), meta};
  },

  /** From the state at the last slot of `epoch + 1`: by then the epoch's attestations are in blocks, and not yet processed. */
  async getAttestationsRewards({epoch, ids}, {chain}) {
    const slot = computeStartSlotAtEpoch(epoch + 2) - 1;
    if (slot > chain.currentSlot()) throw notFound(`The rewards of epoch ${epoch} are known after slot ${slot} (the current slot is ${chain.currentSlot()})`);
    assertAltair(chain, slot, "Attestation rewards");
    const {state, ...meta} = await resolveState(chain, slot);
    const {idealRewards, totalRewards} = await computeAttestationsRewards(chain.config, state.epochCtx.pubkeyCache, state);
    const strip = <T extends {inclusionDelay: number}>({inclusionDelay: _phase0Only, ...rest}: T) => rest;
    return {data: {idealRewards: idealRewards.map(strip), totalRewards: forValidators(state, ids, totalRewards).map(strip)}, meta};
  },
};

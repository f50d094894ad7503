import {EPOCHS_PER_HISTORICAL_VECTOR, ForkSeq, MIN_SEED_LOOKAHEAD, SYNC_COMMITTEE_SIZE, SYNC_COMMITTEE_SUBNET_COUNT} from "@lodestar/params";
import {
  type CachedBeaconStateAllForks,
  type CachedBeaconStateElectra,
  type CachedBeaconStateFulu,
  type EpochShuffling,
  computeEpochAtSlot,
  computeEpochShuffling,
  computeStartSlotAtEpoch,
  computeSyncPeriodAtEpoch,
  getRandaoMix,
} from "@lodestar/state-transition";
import type {IBeaconChain} from "../../chain/interface.ts";
import type {StateId, ValidatorId} from "../codecs.ts";
import {BalanceList} from "../balanceList.ts";
import {badRequest} from "../errors.ts";
import type {Committee, SyncCommitteeByIndices, ValidatorIdentity, stateRoutes} from "../routes/states.ts";
import type {Handlers} from "../routes/types.ts";
import {type SszView, lazyList} from "../streaming.ts";
import type {ApiContext} from "./context.ts";
import {resolveState, selectedIndices} from "./resolve.ts";

/** Handlers of the state routes of states.ts: each reads one resolved state (404 when unknown). */

function balances(state: CachedBeaconStateAllForks, ids: ValidatorId[]): BalanceList {
  // all of them in one walk of the tree: get(i) finds each balance's chunk from the root
  if (ids.length === 0) return new BalanceList(state.balances.getAll());
  const indices = Array.from(selectedIndices(state, ids));
  return new BalanceList(
    indices.map((index) => state.balances.get(index)),
    indices
  );
}

function identities(state: CachedBeaconStateAllForks, ids: ValidatorId[]): Iterable<ValidatorIdentity> {
  const indices = selectedIndices(state, ids);
  return lazyList(function* () {
    for (const index of indices) {
      const {pubkey, activationEpoch} = state.validators.getReadonly(index);
      yield {index, pubkey, activationEpoch};
    }
  });
}

/**
 * The shuffling of `epoch` as `state` sees it: from the epoch caches for its previous, current and
 * next epoch, else computed from the state, for any epoch whose seed's RANDAO mix the state still
 * holds and is final (at most the next epoch, and less than EPOCHS_PER_HISTORICAL_VECTOR back).
 * The state's registry gives the active validators of a past epoch: activation and exit epochs are
 * set at least MAX_SEED_LOOKAHEAD epochs ahead, so none set later reaches back to that epoch.
 */
function shufflingAt(state: CachedBeaconStateAllForks, epoch: number): EpochShuffling {
  const cached = state.epochCtx.getShufflingAtEpochOrNull(epoch);
  if (cached) return cached;
  const stateEpoch = computeEpochAtSlot(state.slot);
  const oldest = Math.max(0, stateEpoch - EPOCHS_PER_HISTORICAL_VECTOR + MIN_SEED_LOOKAHEAD + 2);
  if (epoch > stateEpoch + 1 || epoch < oldest) {
    throw badRequest(`Epoch ${epoch} is out of the range the state's RANDAO mixes cover (epochs ${oldest} to ${stateEpoch + 1} for a state at epoch ${stateEpoch})`);
  }
  const active: number[] = [];
  for (const [index, {activationEpoch, exitEpoch}] of state.validators.getAllReadonlyValues().entries()) {
    if (activationEpoch <= epoch && epoch < exitEpoch) active.push(index);
  }
  return computeEpochShuffling(state, Uint32Array.from(active), epoch);
}

/** The committees of `epoch`, filtered by slot and committee index (a slot outside the epoch matches none). */
function committees(state: CachedBeaconStateAllForks, epoch: number, slot: number | undefined, index: number | undefined): Iterable<Committee> {
  const shuffling = shufflingAt(state, epoch);
  const startSlot = computeStartSlotAtEpoch(epoch);
  return lazyList(function* () {
    for (const [slotInEpoch, slotCommittees] of shuffling.committees.entries()) {
      if (slot !== undefined && slot !== startSlot + slotInEpoch) continue;
      for (const [committeeIndex, members] of slotCommittees.entries()) {
        if (index !== undefined && index !== committeeIndex) continue;
        yield {index: committeeIndex, slot: startSlot + slotInEpoch, validators: Array.from(members)};
      }
    }
  });
}

/** The sync committee serving `epoch`, which must be in the state's sync committee period or the next one. */
function syncCommittee(chain: IBeaconChain, state: CachedBeaconStateAllForks, epoch: number): SyncCommitteeByIndices {
  if (chain.config.getForkSeq(state.slot) < ForkSeq.altair) throw badRequest("The state is before altair: it has no sync committees");
  const statePeriod = computeSyncPeriodAtEpoch(computeEpochAtSlot(state.slot));
  const period = computeSyncPeriodAtEpoch(epoch);
  const {epochCtx} = state;
  const committee = period === statePeriod ? epochCtx.currentSyncCommitteeIndexed : period === statePeriod + 1 ? epochCtx.nextSyncCommitteeIndexed : null;
  if (!committee) throw badRequest(`Epoch ${epoch} is outside the sync committee periods of the state (${statePeriod} and ${statePeriod + 1})`);
  const validators = Array.from(committee.validatorIndices);
  const subnetSize = SYNC_COMMITTEE_SIZE / SYNC_COMMITTEE_SUBNET_COUNT;
  const validatorAggregates = Array.from({length: SYNC_COMMITTEE_SUBNET_COUNT}, (_, i) => validators.slice(i * subnetSize, (i + 1) * subnetSize));
  return {validators, validatorAggregates};
}

function randao(state: CachedBeaconStateAllForks, epoch: number): {randao: Uint8Array} {
  const stateEpoch = computeEpochAtSlot(state.slot);
  if (epoch > stateEpoch || epoch + EPOCHS_PER_HISTORICAL_VECTOR <= stateEpoch) {
    throw badRequest(`Epoch ${epoch} is out of range for the randao_mixes of the state (epoch ${stateEpoch})`);
  }
  return {randao: getRandaoMix(state, epoch)};
}

type ElectraList = "pendingDeposits" | "pendingPartialWithdrawals" | "pendingConsolidations";

/** A list of the state that exists from `since` on (400 for an earlier state), as its tree view, with the state's fork. */
async function stateList(chain: IBeaconChain, stateId: StateId, since: ForkSeq, read: (state: CachedBeaconStateAllForks) => SszView, what: string) {
  const {state, ...meta} = await resolveState(chain, stateId);
  const version = chain.config.getForkName(state.slot);
  if (chain.config.getForkSeq(state.slot) < since) throw badRequest(`The state is at fork ${version}, before ${ForkSeq[since]}: it has no ${what}`);
  return {data: read(state), meta: {version, ...meta}};
}

function electraList(chain: IBeaconChain, stateId: StateId, field: ElectraList, what: string) {
  return stateList(chain, stateId, ForkSeq.electra, (state) => (state as CachedBeaconStateElectra)[field], what);
}

export const stateHandlers: Handlers<typeof stateRoutes, ApiContext> = {
  async getStateValidatorBalances({stateId, id}, {chain}) {
    const {state, ...meta} = await resolveState(chain, stateId);
    return {data: balances(state, id ?? []), meta};
  },

  async postStateValidatorBalances({stateId, ids}, {chain}) {
    const {state, ...meta} = await resolveState(chain, stateId);
    return {data: balances(state, ids), meta};
  },

  async postStateValidatorIdentities({stateId, ids}, {chain}) {
    const {state, ...meta} = await resolveState(chain, stateId);
    return {data: identities(state, ids), meta};
  },

  async getEpochCommittees({stateId, epoch, index, slot}, {chain}) {
    const {state, ...meta} = await resolveState(chain, stateId);
    return {data: committees(state, epoch ?? computeEpochAtSlot(state.slot), slot, index), meta};
  },

  async getEpochSyncCommittees({stateId, epoch}, {chain}) {
    const {state, ...meta} = await resolveState(chain, stateId);
    return {data: syncCommittee(chain, state, epoch ?? computeEpochAtSlot(state.slot)), meta};
  },

  async getStateRandao({stateId, epoch}, {chain}) {
    const {state, ...meta} = await resolveState(chain, stateId);
    return {data: randao(state, epoch ?? computeEpochAtSlot(state.slot)), meta};
  },

  getPendingDeposits: ({stateId}, {chain}) => electraList(chain, stateId, "pendingDeposits", "pending deposits"),
  getPendingPartialWithdrawals: ({stateId}, {chain}) => electraList(chain, stateId, "pendingPartialWithdrawals", "pending partial withdrawals"),
  getPendingConsolidations: ({stateId}, {chain}) => electraList(chain, stateId, "pendingConsolidations", "pending consolidations"),
  getProposerLookahead: ({stateId}, {chain}) =>
    stateList(chain, stateId, ForkSeq.fulu, (state) => (state as CachedBeaconStateFulu).proposerLookahead, "proposer lookahead"),
};

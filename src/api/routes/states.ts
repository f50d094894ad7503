import type {AsciiWriter} from "../asciiJson.ts";
import {BalanceList} from "../balanceList.ts";
import {ContainerType, type ValueOf} from "@chainsafe/ssz";
import {VALIDATOR_REGISTRY_LIMIT} from "@lodestar/params";
import {ArrayOf, ssz, type electra} from "@lodestar/types";
import {
  type ChainMeta,
  type StateId,
  type ValidatorId,
  type VersionedChainMeta,
  chainMeta,
  formatValidatorId,
  forkType,
  list,
  optional,
  parseStringList,
  idLimits,
  parseValidatorId,
  sszData,
  stateId,
  uint,
  uintId,
  validatorId,
  versionedChainMeta,
} from "../codecs.ts";
import {type SszView, streamedListData, viewData} from "../streaming.ts";
import {route, type BodyDef, type DataCodec} from "./types.ts";

/**
 * Routes of the Beacon tag about what a state holds beyond its validators' records: balances and
 * identities, committees, sync committees, RANDAO mixes, the electra queues and the proposer
 * lookahead. (Root, fork, finality and validators are in beacon.ts.)
 */

export const ValidatorBalanceType = new ContainerType({index: ssz.ValidatorIndex, balance: ssz.UintNum64}, {jsonCase: "eth2"});
export type ValidatorBalance = ValueOf<typeof ValidatorBalanceType>;

/** `activation_epoch` is FAR_FUTURE_EPOCH (Infinity here) until the validator is activated. */
export const ValidatorIdentityType = new ContainerType(
  {index: ssz.ValidatorIndex, pubkey: ssz.BLSPubkey, activationEpoch: ssz.EpochInf},
  {jsonCase: "eth2"}
);
export type ValidatorIdentity = ValueOf<typeof ValidatorIdentityType>;

export const CommitteeType = new ContainerType({index: ssz.CommitteeIndex, slot: ssz.Slot, validators: ArrayOf(ssz.ValidatorIndex)}, {jsonCase: "eth2"});
export type Committee = ValueOf<typeof CommitteeType>;

const COMMITTEE_OPEN = Buffer.from('{"index":', "latin1");
const COMMITTEE_SLOT = Buffer.from(',"slot":', "latin1");
const COMMITTEE_VALIDATORS = Buffer.from(',"validators":[', "latin1");
const COMMITTEE_CLOSE = Buffer.from("]}", "latin1");

/** Writes JSON.stringify(CommitteeType.toJson(c)), without the arrays of strings in between. */
export function writeCommittee(out: AsciiWriter, c: Committee): void {
  out.ascii(COMMITTEE_OPEN);
  out.quotedUint(c.index);
  out.ascii(COMMITTEE_SLOT);
  out.quotedUint(c.slot);
  out.ascii(COMMITTEE_VALIDATORS);
  out.quotedUints(c.validators);
  out.ascii(COMMITTEE_CLOSE);
}

/** A sync committee by validator index, and its subnet slices (`SyncCommitteeByValidatorIndices`). */
export const SyncCommitteeByIndicesType = new ContainerType(
  {validators: ArrayOf(ssz.ValidatorIndex), validatorAggregates: ArrayOf(ArrayOf(ssz.ValidatorIndex))},
  {jsonCase: "eth2"}
);
export type SyncCommitteeByIndices = ValueOf<typeof SyncCommitteeByIndicesType>;

export const RandaoResponseType = new ContainerType({randao: ssz.Root}, {jsonCase: "eth2"});

/**
 * A body that is a list of validator ids (indices or 0x public keys), and may be left out:
 * absent, null and `[]` all mean every validator.
 */
export function validatorIdsBody<O>(): BodyDef<ValidatorId[], O> {
  return {
    in: "body",
    optional: true,
    fromJson: (json) => parseStringList(json, "validator ids", parseValidatorId, {maxItems: idLimits.body, unique: true}),
    toJson: (ids) => ids.map(formatValidatorId),
  };
}

const stateIdArg = {in: "path", name: "state_id", codec: stateId} as const;
const epochQuery = {in: "query", name: "epoch", codec: optional(uint)} as const;
const balancesData: DataCodec<ValidatorBalance[], ChainMeta, Iterable<ValidatorBalance>> = {
  ...streamedListData<ValidatorBalance, ChainMeta>(ValidatorBalanceType),
  toJsonChunks: (items) => BalanceList.of(items).jsonPieces(),
};
const identitiesData = streamedListData<ValidatorIdentity, ChainMeta>(ValidatorIdentityType, VALIDATOR_REGISTRY_LIMIT);

/** A list of the state (electra and later), served from the state's tree view in the state's fork. */
function stateListRoute<T>(typeName: string, path: string) {
  return route<{stateId: StateId}, T[], VersionedChainMeta, SszView>({
    method: "GET",
    path: `/eth/v1/beacon/states/{state_id}/${path}`,
    version: 1,
    tag: "Beacon",
    args: {stateId: stateIdArg},
    response: {kind: "data", data: viewData((meta) => forkType(meta.version, typeName), {ssz: true}), meta: versionedChainMeta},
  });
}

export const stateRoutes = {
  getStateValidatorBalances: route<{stateId: StateId; id?: ValidatorId[]}, ValidatorBalance[], ChainMeta, Iterable<ValidatorBalance>>({
    method: "GET",
    path: "/eth/v1/beacon/states/{state_id}/validator_balances",
    version: 1,
    tag: "Beacon",
    args: {stateId: stateIdArg, id: {in: "query", name: "id", codec: list(validatorId, {maxItems: () => idLimits.query, unique: true})}},
    response: {kind: "data", data: balancesData, meta: chainMeta},
  }),
  postStateValidatorBalances: route<{stateId: StateId; ids: ValidatorId[]}, ValidatorBalance[], ChainMeta, Iterable<ValidatorBalance>>({
    method: "POST",
    path: "/eth/v1/beacon/states/{state_id}/validator_balances",
    version: 1,
    tag: "Beacon",
    args: {stateId: stateIdArg, ids: validatorIdsBody()},
    response: {kind: "data", data: balancesData, meta: chainMeta},
  }),
  postStateValidatorIdentities: route<{stateId: StateId; ids: ValidatorId[]}, ValidatorIdentity[], ChainMeta, Iterable<ValidatorIdentity>>({
    method: "POST",
    path: "/eth/v1/beacon/states/{state_id}/validator_identities",
    version: 1,
    tag: "Beacon",
    args: {stateId: stateIdArg, ids: validatorIdsBody()},
    response: {kind: "data", data: identitiesData, meta: chainMeta},
  }),
  getEpochCommittees: route<{stateId: StateId; epoch?: number; index?: number; slot?: number}, Committee[], ChainMeta, Iterable<Committee>>({
    method: "GET",
    path: "/eth/v1/beacon/states/{state_id}/committees",
    version: 1,
    tag: "Beacon",
    args: {
      stateId: stateIdArg,
      epoch: epochQuery,
      index: {in: "query", name: "index", codec: optional(uintId)},
      slot: {in: "query", name: "slot", codec: optional(uintId)},
    },
    response: {kind: "data", data: streamedListData(CommitteeType, undefined, writeCommittee), meta: chainMeta},
  }),
  getEpochSyncCommittees: route<{stateId: StateId; epoch?: number}, SyncCommitteeByIndices, ChainMeta>({
    method: "GET",
    path: "/eth/v1/beacon/states/{state_id}/sync_committees",
    version: 1,
    tag: "Beacon",
    args: {stateId: stateIdArg, epoch: epochQuery},
    response: {kind: "data", data: sszData(() => SyncCommitteeByIndicesType, {ssz: false}), meta: chainMeta},
  }),
  getStateRandao: route<{stateId: StateId; epoch?: number}, {randao: Uint8Array}, ChainMeta>({
    method: "GET",
    path: "/eth/v1/beacon/states/{state_id}/randao",
    version: 1,
    tag: "Beacon",
    args: {stateId: stateIdArg, epoch: epochQuery},
    response: {kind: "data", data: sszData(() => RandaoResponseType, {ssz: false}), meta: chainMeta},
  }),
  getPendingDeposits: stateListRoute<electra.PendingDeposit>("PendingDeposits", "pending_deposits"),
  getPendingPartialWithdrawals: stateListRoute<electra.PendingPartialWithdrawal>("PendingPartialWithdrawals", "pending_partial_withdrawals"),
  getPendingConsolidations: stateListRoute<electra.PendingConsolidation>("PendingConsolidations", "pending_consolidations"),
  /** fulu and later; SSZ of the state's vector is the spec's `List[Uint64, ...]` bytes */
  getProposerLookahead: stateListRoute<number>("ProposerLookahead", "proposer_lookahead"),
};

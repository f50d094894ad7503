import type {AsciiWriter} from "../asciiJson.ts";
import {BooleanType, ContainerType, type ValueOf} from "@chainsafe/ssz";
import type {ChainForkConfig} from "@lodestar/config";
import {type ForkName, MAX_ATTESTATIONS, isForkPostBellatrix} from "@lodestar/params";
import {ssz, stringType, type Attestation, type SignedBeaconBlock, type SignedBlindedBeaconBlock, type deneb, type phase0} from "@lodestar/types";
import {
  type BlockId,
  type ChainMeta,
  type SignedBlockContents,
  type StateId,
  type ValidatorId,
  type VersionedChainMeta,
  blockId,
  chainMeta,
  customBody,
  forkListData,
  forkType,
  formatValidatorId,
  fork,
  list,
  listData,
  oneOf,
  optional,
  parseFork,
  parseStringList,
  idLimits,
  parseValidatorId,
  preElectraListData,
  root,
  signedBlockContentsType,
  sszData,
  stateId,
  uint,
  uintId,
  validatorId,
  versionedChainMeta,
  type SszLike,
} from "../codecs.ts";
import {streamedListData} from "../streaming.ts";
import {type StoredBlock, storedBlockData} from "../storedBlock.ts";
import {route, type BodyDef, type NoArgs} from "./types.ts";

/** Routes of the Beacon tag: genesis, states and blocks (the operation pools are in pool.ts). */

export const GenesisType = new ContainerType(
  {genesisTime: ssz.UintNum64, genesisValidatorsRoot: ssz.Root, genesisForkVersion: ssz.Version},
  {jsonCase: "eth2"}
);
export type Genesis = ValueOf<typeof GenesisType>;

export const RootResponseType = new ContainerType({root: ssz.Root}, {jsonCase: "eth2"});

export const FinalityCheckpointsType = new ContainerType(
  {previousJustified: ssz.phase0.Checkpoint, currentJustified: ssz.phase0.Checkpoint, finalized: ssz.phase0.Checkpoint},
  {jsonCase: "eth2"}
);
export type FinalityCheckpoints = ValueOf<typeof FinalityCheckpointsType>;

export const ValidatorResponseType = new ContainerType(
  {index: ssz.ValidatorIndex, balance: ssz.UintNum64, status: stringType, validator: ssz.phase0.Validator},
  {jsonCase: "eth2"}
);
export type ValidatorResponse = ValueOf<typeof ValidatorResponseType>;

export const BlockHeaderResponseType = new ContainerType(
  {root: ssz.Root, canonical: new BooleanType(), header: ssz.phase0.SignedBeaconBlockHeader},
  {jsonCase: "eth2"}
);
export type BlockHeaderResponse = ValueOf<typeof BlockHeaderResponseType>;

/** The spec's validator statuses, and the four general ones that stand for groups of them. */
export const VALIDATOR_STATUSES = [
  "pending_initialized",
  "pending_queued",
  "active_ongoing",
  "active_exiting",
  "active_slashed",
  "exited_unslashed",
  "exited_slashed",
  "withdrawal_possible",
  "withdrawal_done",
  "active",
  "pending",
  "exited",
  "withdrawal",
] as const;
export type ValidatorStatusFilter = (typeof VALIDATOR_STATUSES)[number];

/** Validators filter: empty lists mean no filtering. */
export interface ValidatorsFilter {
  ids: ValidatorId[];
  statuses: ValidatorStatusFilter[];
}

const validatorsFilterBody = customBody<ValidatorsFilter, {stateId: StateId}>(
  (json) => {
    if (typeof json !== "object" || json === null || Array.isArray(json)) throw new Error("expected a JSON object");
    const {ids, statuses} = json as Record<string, unknown>;
    const isStatus = (s: string) => ((VALIDATOR_STATUSES as readonly string[]).includes(s) ? (s as ValidatorStatusFilter) : undefined);
    return {ids: parseStringList(ids, "ids", parseValidatorId, {maxItems: idLimits.body, unique: true}), statuses: parseStringList(statuses, "statuses", isStatus, {maxItems: idLimits.body, unique: true})};
  },
  (value) => ({ids: value.ids.map(formatValidatorId), statuses: value.statuses})
);

/** `broadcast_validation` of publishBlockV2 (`BroadcastValidation`). */
export const BROADCAST_VALIDATIONS = ["gossip", "consensus", "consensus_and_equivocation"] as const;
export type BroadcastValidation = (typeof BROADCAST_VALIDATIONS)[number];

/** A blinded block from bellatrix on; before, when there is no payload to blind, the full block. */
export type SignedBlindedOrFullBlock = SignedBlindedBeaconBlock | SignedBeaconBlock;
export function signedBlindedBlockType(fork: ForkName): SszLike<SignedBlindedOrFullBlock> {
  return forkType(fork, isForkPostBellatrix(fork) ? "SignedBlindedBeaconBlock" : "SignedBeaconBlock");
}

/**
 * A published block (`typeAt` its fork's type): its fork comes from `Eth-Consensus-Version`,
 * or (v1, which does not require the header) from the block's slot in a JSON body.
 */
function publishedBlockBody<T, O extends {fork?: ForkName}>(typeAt: (fork: ForkName) => SszLike<T>): BodyDef<T, O> {
  const forkOf = (others: O, json: unknown, config: ChainForkConfig): ForkName => {
    if (others.fork !== undefined) return others.fork;
    const body = json as {message?: {slot?: unknown}; signed_block?: {message?: {slot?: unknown}}} | null;
    const slot = body?.message?.slot ?? body?.signed_block?.message?.slot;
    if (typeof slot !== "string") throw new Error("no message.slot to tell the fork by; send Eth-Consensus-Version");
    const name = parseFork(config.getForkName(Number(slot)));
    if (!name) throw new Error(`slot ${slot} is in a fork this API does not serve`);
    return name;
  };
  const known = (others: O): ForkName => {
    if (others.fork === undefined) throw new Error("SSZ bodies need the Eth-Consensus-Version header");
    return others.fork;
  };
  return {
    in: "body",
    fromJson: (json, others, config) => typeAt(forkOf(others, json, config)).fromJson(json),
    toJson: (value, others) => typeAt(known(others)).toJson(value),
    ssz: {
      deserialize: (bytes, others) => typeAt(known(others)).deserialize(bytes),
      serialize: (value, others) => typeAt(known(others)).serialize(value),
    },
  };
}

const stateIdArg = {in: "path", name: "state_id", codec: stateId} as const;
const blockIdArg = {in: "path", name: "block_id", codec: blockId} as const;
const BLOCK_ATTESTATIONS_V2_PATH = "/eth/v2/beacon/blocks/{block_id}/attestations";
const rootData = sszData<{root: Uint8Array}, ChainMeta>(() => RootResponseType, {ssz: false});
const VALIDATOR_OPEN = Buffer.from('{"index":', "latin1");
const VALIDATOR_BALANCE = Buffer.from(',"balance":', "latin1");
const VALIDATOR_STATUS = Buffer.from(',"status":"', "latin1");
const VALIDATOR_PUBKEY = Buffer.from('","validator":{"pubkey":"0x', "latin1");
const VALIDATOR_CREDENTIALS = Buffer.from('","withdrawal_credentials":"0x', "latin1");
const VALIDATOR_EFFECTIVE_BALANCE = Buffer.from('","effective_balance":', "latin1");
const VALIDATOR_SLASHED = Buffer.from(',"slashed":', "latin1");
const VALIDATOR_ELIGIBILITY = Buffer.from(',"activation_eligibility_epoch":', "latin1");
const VALIDATOR_ACTIVATION = Buffer.from(',"activation_epoch":', "latin1");
const VALIDATOR_EXIT = Buffer.from(',"exit_epoch":', "latin1");
const VALIDATOR_WITHDRAWABLE = Buffer.from(',"withdrawable_epoch":', "latin1");
const VALIDATOR_CLOSE = Buffer.from("}}", "latin1");
const TRUE = Buffer.from("true", "latin1");
const FALSE = Buffer.from("false", "latin1");

/** Writes JSON.stringify(ValidatorResponseType.toJson(v)) (the largest lists the API serves: every validator of a state). */
export function writeValidatorResponse(out: AsciiWriter, {index, balance, status, validator: v}: ValidatorResponse): void {
  out.ascii(VALIDATOR_OPEN);
  out.quotedUint(index);
  out.ascii(VALIDATOR_BALANCE);
  out.quotedUint(balance);
  out.ascii(VALIDATOR_STATUS);
  // the status names are lowercase ASCII (VALIDATOR_STATUSES): no escapes
  out.text(status);
  out.ascii(VALIDATOR_PUBKEY);
  out.hex(v.pubkey);
  out.ascii(VALIDATOR_CREDENTIALS);
  out.hex(v.withdrawalCredentials);
  out.ascii(VALIDATOR_EFFECTIVE_BALANCE);
  out.quotedUint(v.effectiveBalance);
  out.ascii(VALIDATOR_SLASHED);
  out.ascii(v.slashed ? TRUE : FALSE);
  out.ascii(VALIDATOR_ELIGIBILITY);
  out.quotedUint(v.activationEligibilityEpoch);
  out.ascii(VALIDATOR_ACTIVATION);
  out.quotedUint(v.activationEpoch);
  out.ascii(VALIDATOR_EXIT);
  out.quotedUint(v.exitEpoch);
  out.ascii(VALIDATOR_WITHDRAWABLE);
  out.quotedUint(v.withdrawableEpoch);
  out.ascii(VALIDATOR_CLOSE);
}

const validatorsData = streamedListData<ValidatorResponse, ChainMeta>(ValidatorResponseType, undefined, writeValidatorResponse);

export const beaconRoutes = {
  getGenesis: route<NoArgs, Genesis>({
    method: "GET",
    path: "/eth/v1/beacon/genesis",
    version: 1,
    tag: "Beacon",
    args: {},
    response: {kind: "data", data: sszData(() => GenesisType, {ssz: false}), meta: {}},
  }),
  getStateRoot: route<{stateId: StateId}, {root: Uint8Array}, ChainMeta>({
    method: "GET",
    path: "/eth/v1/beacon/states/{state_id}/root",
    version: 1,
    tag: "Beacon",
    args: {stateId: stateIdArg},
    response: {kind: "data", data: rootData, meta: chainMeta},
  }),
  getStateFork: route<{stateId: StateId}, phase0.Fork, ChainMeta>({
    method: "GET",
    path: "/eth/v1/beacon/states/{state_id}/fork",
    version: 1,
    tag: "Beacon",
    args: {stateId: stateIdArg},
    response: {kind: "data", data: sszData(() => ssz.phase0.Fork, {ssz: false}), meta: chainMeta},
  }),
  getStateFinalityCheckpoints: route<{stateId: StateId}, FinalityCheckpoints, ChainMeta>({
    method: "GET",
    path: "/eth/v1/beacon/states/{state_id}/finality_checkpoints",
    version: 1,
    tag: "Beacon",
    args: {stateId: stateIdArg},
    response: {kind: "data", data: sszData(() => FinalityCheckpointsType, {ssz: false}), meta: chainMeta},
  }),
  getStateValidators: route<{stateId: StateId; id?: ValidatorId[]; status?: ValidatorStatusFilter[]}, ValidatorResponse[], ChainMeta, Iterable<ValidatorResponse>>({
    method: "GET",
    path: "/eth/v1/beacon/states/{state_id}/validators",
    version: 1,
    tag: "Beacon",
    args: {
      stateId: stateIdArg,
      id: {in: "query", name: "id", codec: list(validatorId, {maxItems: () => idLimits.query, unique: true})},
      status: {in: "query", name: "status", codec: list(oneOf(VALIDATOR_STATUSES), {unique: true})},
    },
    response: {kind: "data", data: validatorsData, meta: chainMeta},
  }),
  postStateValidators: route<{stateId: StateId; filter: ValidatorsFilter}, ValidatorResponse[], ChainMeta, Iterable<ValidatorResponse>>({
    method: "POST",
    path: "/eth/v1/beacon/states/{state_id}/validators",
    version: 1,
    tag: "Beacon",
    args: {stateId: stateIdArg, filter: validatorsFilterBody},
    response: {kind: "data", data: validatorsData, meta: chainMeta},
  }),
  getStateValidator: route<{stateId: StateId; validatorId: ValidatorId}, ValidatorResponse, ChainMeta>({
    method: "GET",
    path: "/eth/v1/beacon/states/{state_id}/validators/{validator_id}",
    version: 1,
    tag: "Beacon",
    args: {stateId: stateIdArg, validatorId: {in: "path", name: "validator_id", codec: validatorId}},
    response: {kind: "data", data: sszData(() => ValidatorResponseType, {ssz: false}), meta: chainMeta},
  }),
  getBlockRoot: route<{blockId: BlockId}, {root: Uint8Array}, ChainMeta>({
    method: "GET",
    path: "/eth/v1/beacon/blocks/{block_id}/root",
    version: 1,
    tag: "Beacon",
    args: {blockId: blockIdArg},
    response: {kind: "data", data: rootData, meta: chainMeta},
  }),
  getBlockHeader: route<{blockId: BlockId}, BlockHeaderResponse, ChainMeta>({
    method: "GET",
    path: "/eth/v1/beacon/headers/{block_id}",
    version: 1,
    tag: "Beacon",
    args: {blockId: blockIdArg},
    response: {kind: "data", data: sszData(() => BlockHeaderResponseType, {ssz: false}), meta: chainMeta},
  }),
  getBlockHeaders: route<{slot?: number; parentRoot?: Uint8Array}, BlockHeaderResponse[], ChainMeta>({
    method: "GET",
    path: "/eth/v1/beacon/headers",
    version: 1,
    tag: "Beacon",
    args: {slot: {in: "query", name: "slot", codec: optional(uintId)}, parentRoot: {in: "query", name: "parent_root", codec: optional(root)}},
    response: {kind: "data", data: listData(BlockHeaderResponseType), meta: chainMeta},
  }),
  getBlockV2: route<{blockId: BlockId}, SignedBeaconBlock, VersionedChainMeta, StoredBlock>({
    method: "GET",
    path: "/eth/v2/beacon/blocks/{block_id}",
    version: 2,
    tag: "Beacon",
    args: {blockId: blockIdArg},
    response: {kind: "data", data: storedBlockData((meta) => forkType(meta.version, "SignedBeaconBlock")), meta: versionedChainMeta},
  }),
  /** 200 when imported; 202 when it passed `broadcast_validation` but failed full validation */
  publishBlockV2: route<{signedBlockContents: SignedBlockContents; broadcastValidation?: BroadcastValidation; fork: ForkName}, number>({
    method: "POST",
    path: "/eth/v2/beacon/blocks",
    version: 2,
    tag: "Beacon",
    args: {
      signedBlockContents: publishedBlockBody(signedBlockContentsType),
      broadcastValidation: {in: "query", name: "broadcast_validation", codec: optional(oneOf(BROADCAST_VALIDATIONS))},
      fork: {in: "header", name: "Eth-Consensus-Version", codec: fork},
    },
    response: {kind: "status"},
  }),
  publishBlock: route<{signedBlockContents: SignedBlockContents; fork?: ForkName}, number>({
    method: "POST",
    path: "/eth/v1/beacon/blocks",
    version: 1,
    tag: "Beacon",
    args: {signedBlockContents: publishedBlockBody(signedBlockContentsType), fork: {in: "header", name: "Eth-Consensus-Version", codec: optional(fork)}},
    response: {kind: "status"},
  }),
  getBlockAttestationsV2: route<{blockId: BlockId}, Attestation[], VersionedChainMeta>({
    method: "GET",
    path: BLOCK_ATTESTATIONS_V2_PATH,
    version: 2,
    tag: "Beacon",
    args: {blockId: blockIdArg},
    response: {kind: "data", data: forkListData((meta) => forkType(meta.version, "Attestation")), meta: versionedChainMeta},
  }),
  /**
   * Removed from the standard API in v4; kept for old clients: the block's attestations in its
   * fork's JSON form (v2's answer), SSZ up to deneb only (406 naming v2 after).
   */
  getBlockAttestations: route<{blockId: BlockId}, Attestation[], VersionedChainMeta>({
    method: "GET",
    path: "/eth/v1/beacon/blocks/{block_id}/attestations",
    version: 1,
    tag: "Beacon",
    args: {blockId: blockIdArg},
    response: {
      kind: "data",
      data: preElectraListData("Attestation", ssz.phase0.Attestation, MAX_ATTESTATIONS, `GET ${BLOCK_ATTESTATIONS_V2_PATH} (getBlockAttestationsV2)`),
      meta: versionedChainMeta,
    },
  }),
  getBlindedBlock: route<{blockId: BlockId}, SignedBlindedOrFullBlock, VersionedChainMeta>({
    method: "GET",
    path: "/eth/v1/beacon/blinded_blocks/{block_id}",
    version: 1,
    tag: "Beacon",
    args: {blockId: blockIdArg},
    response: {kind: "data", data: sszData((meta) => signedBlindedBlockType(meta.version), {ssz: true}), meta: versionedChainMeta},
  }),
  /** 200 when imported; 202 when it passed `broadcast_validation` but failed full validation (as publishBlockV2) */
  publishBlindedBlockV2: route<{signedBlindedBlock: SignedBlindedOrFullBlock; broadcastValidation?: BroadcastValidation; fork: ForkName}, number>({
    method: "POST",
    path: "/eth/v2/beacon/blinded_blocks",
    version: 2,
    tag: "Beacon",
    args: {
      signedBlindedBlock: publishedBlockBody(signedBlindedBlockType),
      broadcastValidation: {in: "query", name: "broadcast_validation", codec: optional(oneOf(BROADCAST_VALIDATIONS))},
      fork: {in: "header", name: "Eth-Consensus-Version", codec: fork},
    },
    response: {kind: "status"},
  }),
  /** Removed from the standard API in v4; kept beside publishBlock. */
  publishBlindedBlock: route<{signedBlindedBlock: SignedBlindedOrFullBlock; fork?: ForkName}, number>({
    method: "POST",
    path: "/eth/v1/beacon/blinded_blocks",
    version: 1,
    tag: "Beacon",
    args: {signedBlindedBlock: publishedBlockBody(signedBlindedBlockType), fork: {in: "header", name: "Eth-Consensus-Version", codec: optional(fork)}},
    response: {kind: "status"},
  }),
  /** Deprecated in the standard API (for getBlobs), still served. */
  getBlobSidecars: route<{blockId: BlockId; indices?: number[]}, deneb.BlobSidecars, VersionedChainMeta>({
    method: "GET",
    path: "/eth/v1/beacon/blob_sidecars/{block_id}",
    version: 1,
    tag: "Beacon",
    args: {blockId: blockIdArg, indices: {in: "query", name: "indices", codec: list(uint, {unique: true})}},
    response: {kind: "data", data: sszData(() => ssz.deneb.BlobSidecars, {ssz: true}), meta: versionedChainMeta},
  }),
  getBlobs: route<{blockId: BlockId; versionedHashes?: Uint8Array[]}, deneb.Blobs, ChainMeta>({
    method: "GET",
    path: "/eth/v1/beacon/blobs/{block_id}",
    version: 1,
    tag: "Beacon",
    args: {blockId: blockIdArg, versionedHashes: {in: "query", name: "versioned_hashes", codec: list(root, {unique: true})}},
    response: {kind: "data", data: sszData(() => ssz.deneb.Blobs, {ssz: true}), meta: chainMeta},
  }),
};

import {Tree} from "@chainsafe/persistent-merkle-tree";
import type {ChainForkConfig} from "@lodestar/config";
import {
  BLOCK_BODY_EXECUTION_PAYLOAD_GINDEX,
  CURRENT_SYNC_COMMITTEE_GINDEX,
  CURRENT_SYNC_COMMITTEE_GINDEX_ELECTRA,
  FINALIZED_ROOT_GINDEX,
  FINALIZED_ROOT_GINDEX_ELECTRA,
  ForkName,
  type ForkPostAltair,
  ForkSeq,
  NEXT_SYNC_COMMITTEE_GINDEX,
  NEXT_SYNC_COMMITTEE_GINDEX_ELECTRA,
  isForkPostCapella,
} from "@lodestar/params";
import {type BeaconStateAllForks, executionPayloadToPayloadHeader} from "@lodestar/state-transition";
import {sszTypesFor, type BeaconBlock, type ExecutionPayload, type LightClientHeader} from "@lodestar/types";

/**
 * The full node's helpers of the light-client specs (altair/light-client/full-node.md and the
 * capella, deneb and electra upgrades): `block_to_light_client_header`, the headers of an
 * earlier fork in a later fork's type (`upgrade_lc_header_to_*`), and `compute_merkle_proof`
 * over states at the fork's generalized indices.
 */

/** `compute_merkle_proof(object, gindex)`: the branch from the leaf's sibling up to the root's children. */
function merkleProof(view: {node: Tree["rootNode"]}, gindex: number): Uint8Array[] {
  return new Tree(view.node).getSingleProof(BigInt(gindex));
}

type StateProof = "currentSyncCommittee" | "nextSyncCommittee" | "finalizedRoot";

/** Generalized indices of the state's fields: moved by electra (the state grew past 32 fields). */
const GINDEX: Record<StateProof, [preElectra: number, electra: number]> = {
  currentSyncCommittee: [CURRENT_SYNC_COMMITTEE_GINDEX, CURRENT_SYNC_COMMITTEE_GINDEX_ELECTRA],
  nextSyncCommittee: [NEXT_SYNC_COMMITTEE_GINDEX, NEXT_SYNC_COMMITTEE_GINDEX_ELECTRA],
  finalizedRoot: [FINALIZED_ROOT_GINDEX, FINALIZED_ROOT_GINDEX_ELECTRA],
};

/** The proof of a state field, at the gindex of the state's own fork (`*_gindex_at_slot(state.slot)`). */
export function stateProof(config: ChainForkConfig, state: BeaconStateAllForks, field: StateProof): Uint8Array[] {
  state.commit();
  const [pre, post] = GINDEX[field];
  return merkleProof(state, config.getForkSeq(state.slot) >= ForkSeq.electra ? post : pre);
}

/** `block_to_light_client_header`, in the type of the block's own fork. */
export function blockToLightClientHeader(config: ChainForkConfig, block: BeaconBlock): LightClientHeader {
  const fork = config.getForkName(block.slot) as ForkPostAltair;
  const types = sszTypesFor(fork);
  const bodyView = types.BeaconBlockBody.toView(block.body as never);
  const beacon = {
    slot: block.slot,
    proposerIndex: block.proposerIndex,
    parentRoot: block.parentRoot,
    stateRoot: block.stateRoot,
    bodyRoot: bodyView.hashTreeRoot(),
  };
  if (!isForkPostCapella(fork)) return {beacon};
  const payload = (block.body as {executionPayload: ExecutionPayload}).executionPayload;
  return {
    beacon,
    execution: executionPayloadToPayloadHeader(ForkSeq[fork], payload),
    executionBranch: merkleProof(bodyView, BLOCK_BODY_EXECUTION_PAYLOAD_GINDEX),
  } as LightClientHeader;
}

/**
 * A header in the type of a later fork (`upgrade_lc_header_to_capella`, `_deneb`, ...): fields the
 * header's own fork lacks are zero, as the fork documents say.
 */
export function headerAtFork(header: LightClientHeader, fork: ForkPostAltair): LightClientHeader {
  if (!isForkPostCapella(fork)) return {beacon: header.beacon};
  const empty = sszTypesFor(fork).LightClientHeader.defaultValue() as LightClientHeader<ForkName.capella>;
  const own = header as Partial<LightClientHeader<ForkName.capella>>;
  return {
    beacon: header.beacon,
    execution: {...empty.execution, ...(own.execution ?? {})},
    executionBranch: own.executionBranch ?? empty.executionBranch,
  } as LightClientHeader;
}

/** The empty header (`LightClientHeader()`) of a fork. */
export function emptyHeader(fork: ForkPostAltair): LightClientHeader {
  return sszTypesFor(fork).LightClientHeader.defaultValue() as LightClientHeader;
}

import type {BeaconConfig} from "@lodestar/config";
import {ForkSeq} from "@lodestar/params";
import {type CachedBeaconStateAllForks, type CachedBeaconStateExecutions, computeEpochAtSlot, stateTransition} from "@lodestar/state-transition";
import type {BeaconBlock, Root} from "@lodestar/types";
import {EMPTY_BLOBS_BUNDLE, type BuiltPayload, type ExecutionEngine} from "../execution/engine.ts";
import type {OperationPools} from "../pools/index.ts";
import type {ProduceBlockArgs, ProducedBlock} from "./interface.ts";
import {payloadAttributes} from "./payloadAttributes.ts";
import {TRUSTED_TRANSITION} from "./regen.ts";
import {askBuilder, chooseBuilderBid, type BlockBuilder} from "./builderChoice.ts";

export interface ProduceBlockDeps {
  config: BeaconConfig;
  engine: ExecutionEngine;
  pools: OperationPools;
  defaultGraffiti: () => Uint8Array;
  feeRecipientOf: (validatorIndex: number) => Uint8Array;
  /** with `--builder`: the external block builder the payload may come from */
  builder?: BlockBuilder | null;
}

/**
 * Builds an unsigned block on `preState` (the parent's post-state advanced to `args.slot`):
 * operations from the pools, a payload from the execution engine (or, with a builder, the
 * header of the builder's bid when it is worth more: a blinded block), and the state root the
 * block yields.
 */
export async function produceBlock(
  deps: ProduceBlockDeps,
  preState: CachedBeaconStateAllForks,
  parentRoot: Root,
  args: ProduceBlockArgs
): Promise<ProducedBlock> {
  const {config, pools, engine} = deps;
  const {slot} = args;
  const fork = config.getForkName(slot);
  const forkSeq = ForkSeq[fork];
  const proposerIndex = preState.epochCtx.getBeaconProposer(slot);
  const ops = pools.opPool.getForBlock(preState);

  const body: Record<string, unknown> = {
    randaoReveal: args.randaoReveal,
    // No deposit contract on the dev chain: the eth1 vote stays what the state has.
    eth1Data: preState.eth1Data.toValue(),
    graffiti: args.graffiti ?? deps.defaultGraffiti(),
    proposerSlashings: ops.proposerSlashings,
    attesterSlashings: ops.attesterSlashings,
    attestations: pools.attestations.getAttestationsForBlock(preState),
    deposits: [],
    voluntaryExits: ops.voluntaryExits,
  };
  if (forkSeq >= ForkSeq.altair) {
    body.syncAggregate = pools.syncCommittee.getSyncAggregate(slot, parentRoot);
  }
  let executionPayloadValue = 0n;
  let blobsBundle = EMPTY_BLOBS_BUNDLE;
  let blinded = false;
  if (forkSeq >= ForkSeq.bellatrix) {
    const state = preState as CachedBeaconStateExecutions;
    const header = state.latestExecutionPayloadHeader;
    const parent = {blockHash: header.blockHash, blockNumber: header.blockNumber, gasLimit: header.gasLimit};
    const attributes = payloadAttributes(config, preState, parentRoot, args.feeRecipient ?? deps.feeRecipientOf(proposerIndex));
    // the local payload and the builder's bid at the same time (builder-specs: the local build starts in parallel)
    const bidding = deps.builder
      ? askBuilder(deps.builder, {
          fork,
          slot,
          proposerPubkey: preState.validators.getReadonly(proposerIndex).pubkey,
          preState,
          parentHash: parent.blockHash,
          parentBlockNumber: parent.blockNumber,
          parentGasLimit: parent.gasLimit,
          attributes,
          maxBlobsPerBlock: config.getMaxBlobsPerBlock(computeEpochAtSlot(slot)),
        }, args.builderBoostFactor)
      : null;
    const [local, bid] = await Promise.all([
      engine.buildPayload(fork, parent, attributes).then(
        (built): {built: BuiltPayload} | {error: Error} => ({built}),
        (error: Error) => ({error})
      ),
      bidding,
    ]);
    const chosen = chooseBuilderBid(slot, local, bid, args.builderBoostFactor ?? deps.builder?.boostFactor ?? 100n, deps.builder?.countChoice?.bind(deps.builder));
    if (chosen) {
      const {message} = chosen.bid as {message: Record<string, unknown> & {header: unknown; value: bigint}};
      blinded = true;
      body.executionPayloadHeader = message.header;
      executionPayloadValue = message.value;
      if (forkSeq >= ForkSeq.deneb) body.blobKzgCommitments = message.blobKzgCommitments;
      if (forkSeq >= ForkSeq.electra) body.executionRequests = message.executionRequests;
    } else {
      if ("error" in local) throw local.error;
      const {built} = local;
      body.executionPayload = built.payload;
      executionPayloadValue = built.blockValue;
      if (forkSeq >= ForkSeq.deneb) {
        blobsBundle = built.blobsBundle;
        body.blobKzgCommitments = blobsBundle.commitments;
      }
      if (forkSeq >= ForkSeq.electra) body.executionRequests = built.executionRequests;
    }
    if (forkSeq >= ForkSeq.capella) body.blsToExecutionChanges = ops.blsToExecutionChanges;
  }

  const block = {slot, proposerIndex, parentRoot, stateRoot: new Uint8Array(32), body} as unknown as BeaconBlock;
  // a blinded block transitions the state as its full block does (the header stands for the payload)
  const postState = stateTransition(
    preState,
    {message: block, signature: new Uint8Array(96)} as never,
    TRUSTED_TRANSITION
  );
  block.stateRoot = postState.hashTreeRoot();
  const rewards = postState.proposerRewards;
  const consensusBlockValue = BigInt(rewards.attestations + rewards.syncAggregate + rewards.slashing);
  return {block, fork, executionPayloadValue, consensusBlockValue, blobsBundle, blinded};
}

import type {BeaconConfig} from "@lodestar/config";
import {ForkSeq} from "@lodestar/params";
import {type CachedBeaconStateAllForks, type CachedBeaconStateExecutions, stateTransition} from "@lodestar/state-transition";
import type {BeaconBlock, Root} from "@lodestar/types";
import {EMPTY_BLOBS_BUNDLE, type ExecutionEngine} from "../execution/engine.ts";
import type {OperationPools} from "../pools/index.ts";
import type {ProduceBlockArgs, ProducedBlock} from "./interface.ts";
import {payloadAttributes} from "./payloadAttributes.ts";
import {TRUSTED_TRANSITION} from "./regen.ts";

export interface ProduceBlockDeps {
  config: BeaconConfig;
  engine: ExecutionEngine;
  pools: OperationPools;
  defaultGraffiti: () => Uint8Array;
  feeRecipientOf: (validatorIndex: number) => Uint8Array;
}

/**
 * Builds an unsigned block on `preState` (the parent's post-state advanced to `args.slot`):
 * operations from the pools, a payload from the execution engine, and the state root the
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
  if (forkSeq >= ForkSeq.bellatrix) {
    const state = preState as CachedBeaconStateExecutions;
    const header = state.latestExecutionPayloadHeader;
    const built = await engine.buildPayload(
      fork,
      {blockHash: header.blockHash, blockNumber: header.blockNumber, gasLimit: header.gasLimit},
      payloadAttributes(config, preState, parentRoot, args.feeRecipient ?? deps.feeRecipientOf(proposerIndex))
    );
    body.executionPayload = built.payload;
    executionPayloadValue = built.blockValue;
    if (forkSeq >= ForkSeq.capella) body.blsToExecutionChanges = ops.blsToExecutionChanges;
    if (forkSeq >= ForkSeq.deneb) {
      blobsBundle = built.blobsBundle;
      body.blobKzgCommitments = blobsBundle.commitments;
    }
    if (forkSeq >= ForkSeq.electra) body.executionRequests = built.executionRequests;
  }

  const block = {slot, proposerIndex, parentRoot, stateRoot: new Uint8Array(32), body} as unknown as BeaconBlock;
  const postState = stateTransition(
    preState,
    {message: block, signature: new Uint8Array(96)} as never,
    TRUSTED_TRANSITION
  );
  block.stateRoot = postState.hashTreeRoot();
  const rewards = postState.proposerRewards;
  const consensusBlockValue = BigInt(rewards.attestations + rewards.syncAggregate + rewards.slashing);
  return {block, fork, executionPayloadValue, consensusBlockValue, blobsBundle};
}

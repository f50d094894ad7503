import {ForkSeq, SYNC_COMMITTEE_SUBNET_COUNT, isForkPostBellatrix, isForkPostElectra} from "@lodestar/params";
import {beaconBlockToBlinded, computeEpochAtSlot, computeStartSlotAtEpoch, computeSyncPeriodAtEpoch} from "@lodestar/state-transition";
import type {BeaconBlock} from "@lodestar/types";
import {toHex, toRootHex} from "@lodestar/utils";
import {
  attesterDependentRoot,
  proposerDependentRoot,
  proposerDuties,
  syncCommitteeDuties,
} from "../../duties/index.ts";
import {getLogger} from "../../log.ts";
import type {BlockContents} from "../codecs.ts";
import {isValidRegistrationSignature} from "../../execution/validatorRegistration.ts";
import {EngineUnavailableError} from "../../execution/engine.ts";
import type {BlockError} from "../../chain/interface.ts";
import {ApiError, badRequest, notFound} from "../errors.ts";
import type {Handlers} from "../routes/types.ts";
import type {ProduceBlockArgs, validatorRoutes} from "../routes/validator.ts";
import {type ApiContext, assertHeadNotOptimistic, assertNotSyncing, broadcast} from "./context.ts";
import {assertAttestationFormat, submitEach} from "./pool.ts";
import {notImplemented} from "./notImplemented.ts";
import {answerCacheOf, dutiesKey, headKey} from "./answerCache.ts";
import {stateForEpoch} from "./resolve.ts";
import {then} from "../../maybePromise.ts";
import {AttesterDutyAnswers} from "./attesterDutyAnswers.ts";

/** Handlers of the Validator tag. */

const log = getLogger("api");
const WEI_PER_GWEI = 1_000_000_000n;
/** Selections are exchanged by distributed validator middleware, not by a beacon node. */
const SELECTIONS_NOT_IMPLEMENTED = "Not implemented: selections are combined by distributed validator middleware, not by the beacon node";
/** The BLS G2 point at infinity: the only randao reveal allowed with `skip_randao_verification`. */
const G2_INFINITY = Uint8Array.from({length: 96}, (_, i) => (i === 0 ? 0xc0 : 0));

function currentEpoch(ctx: ApiContext): number {
  return computeEpochAtSlot(ctx.chain.currentSlot());
}

/** Duties are known at most one epoch ahead of the clock. */
function assertAtMostNextEpoch(ctx: ApiContext, epoch: number): void {
  const next = currentEpoch(ctx) + 1;
  if (epoch > next) throw badRequest(`Invalid epoch: ${epoch} is beyond the next epoch ${next}`);
}

/** A slot the node may be asked to act in: not past the clock's next slot (validator clocks run a little ahead). */
function assertNotFutureSlot(ctx: ApiContext, slot: number): void {
  const next = ctx.chain.currentSlot() + 1;
  if (slot > next) throw badRequest(`Invalid slot: ${slot} is in the future (current slot ${next - 1})`);
}

/** `builder_boost_factor` of a request that wants the builder's block whenever it has a usable one (the v1 blinded route). */
const ALWAYS_BUILDER = 2n ** 64n - 1n;

async function produceBlock(args: ProduceBlockArgs, ctx: ApiContext, builderBoostFactor?: bigint) {
  assertNotSyncing(ctx);
  // a block the node could not store is not produced (nor signed by whoever asked): 503 with the reason
  const paused = ctx.chain.writesPausedError();
  if (paused) throw paused;
  assertHeadNotOptimistic(ctx);
  const {slot, randaoReveal, graffiti, skipRandaoVerification} = args;
  if (skipRandaoVerification && !randaoReveal.every((b, i) => b === G2_INFINITY[i])) {
    throw badRequest("randao_reveal must be the point at infinity when skip_randao_verification is set");
  }
  const headSlot = ctx.chain.getHead().slot;
  if (slot <= headSlot) throw badRequest(`Invalid slot: ${slot} is not after the head slot ${headSlot}`);
  assertNotFutureSlot(ctx, slot);
  // without a builder there is nothing to weigh: the factor is not passed on
  const boost = ctx.builder ? builderBoostFactor : undefined;
  const produced = await ctx.chain.produceBlock({slot, randaoReveal, graffiti: graffiti ?? ctx.node.graffiti(), builderBoostFactor: boost}).catch((e: unknown) => {
    if (e instanceof EngineUnavailableError) throw new ApiError(503, `Execution engine unavailable: ${e.message}`);
    // the head moved to the slot while the request waited for an import
    if (e instanceof Error && e.name === "BlockError" && (e as BlockError).code === "NOT_LATER_THAN_PARENT") throw badRequest(`Invalid slot: ${e.message}`);
    throw e;
  });
  const contents: BlockContents = {block: produced.block, kzgProofs: produced.blobsBundle.proofs, blobs: produced.blobsBundle.blobs};
  return {contents, ...produced};
}

export const validatorHandlers: Handlers<typeof validatorRoutes, ApiContext> = {
  // duties asked again (every slot, by every validator client) are answered without an await
  // while the head state serves them and their answer is kept (see maybePromise.ts)
  getProposerDuties({epoch}, ctx) {
    assertNotSyncing(ctx);
    assertAtMostNextEpoch(ctx, epoch);
    return then(stateForEpoch(ctx.chain, epoch, (headEpoch) => headEpoch === epoch), (state) => {
      const dependentRoot = proposerDependentRoot(state, epoch);
      const duties = answerCacheOf(ctx.chain).ofDependentRootGet(dutiesKey("proposer_duties", epoch, dependentRoot), () => proposerDuties(state, epoch));
      return then(duties, (data) => ({data, meta: {dependentRoot, executionOptimistic: ctx.chain.isHeadOptimistic()}}));
    });
  },

  getAttesterDuties({epoch, validators}, ctx) {
    assertNotSyncing(ctx);
    assertAtMostNextEpoch(ctx, epoch);
    // a state serves the committees of its epoch and the next: asked at an epoch's start (the head still in the epoch
    // before), the next epoch's duties come from the head advanced into the clock's epoch, not one more epoch transition
    const serves = (stateEpoch: number): boolean => epoch >= stateEpoch - 1 && epoch <= stateEpoch + 1;
    return then(stateForEpoch(ctx.chain, epoch, serves, epoch - 1), (state) => {
      const dependentRoot = attesterDependentRoot(state, epoch);
      const answers = answerCacheOf(ctx.chain).ofDependentRootGet(dutiesKey("attester_duties", epoch, dependentRoot), () => new AttesterDutyAnswers());
      return then(answers, (kept) => ({
        data: kept.answer(state, epoch, validators),
        meta: {dependentRoot, executionOptimistic: ctx.chain.isHeadOptimistic()},
      }));
    });
  },

  async getSyncCommitteeDuties({epoch, indices}, ctx) {
    assertNotSyncing(ctx);
    if (ctx.chain.config.getForkSeq(computeStartSlotAtEpoch(epoch)) < ForkSeq.altair) {
      throw badRequest(`Invalid epoch: ${epoch} is before altair, which has no sync committees`);
    }
    const period = computeSyncPeriodAtEpoch(epoch);
    const nextPeriod = computeSyncPeriodAtEpoch(currentEpoch(ctx)) + 1;
    if (period > nextPeriod) throw badRequest(`Invalid epoch: ${epoch} is beyond the next sync committee period ${nextPeriod}`);
    // a head state before altair has no sync committees: the state advanced to the epoch has them
    const headServes = (headEpoch: number) =>
      ctx.chain.config.getForkSeqAtEpoch(headEpoch) >= ForkSeq.altair &&
      (period === computeSyncPeriodAtEpoch(headEpoch) || period === computeSyncPeriodAtEpoch(headEpoch) + 1);
    const state = await stateForEpoch(ctx.chain, epoch, headServes);
    return {data: syncCommitteeDuties(state, epoch, indices), meta: {executionOptimistic: ctx.chain.isHeadOptimistic()}};
  },

  async produceBlockV3({builderBoostFactor, ...args}, ctx) {
    const {contents, fork, executionPayloadValue, consensusBlockValue, blinded} = await produceBlock(args, ctx, builderBoostFactor);
    return {
      data: contents,
      meta: {version: fork, executionPayloadBlinded: blinded ?? false, executionPayloadValue, consensusBlockValue: consensusBlockValue * WEI_PER_GWEI},
    };
  },

  /** Full blocks only (the route has no blinded form): the local payload. */
  async produceBlockV2(args, ctx) {
    const {contents, fork, executionPayloadValue, consensusBlockValue} = await produceBlock(args, ctx, 0n);
    return {data: contents, meta: {version: fork, blockValue: executionPayloadValue, consensusBlockValue: consensusBlockValue * WEI_PER_GWEI}};
  },

  /** The builder's block when it has a usable bid, else the local block blinded (its payload is kept: publishing unblinds it). */
  async produceBlindedBlock(args, ctx) {
    const {contents, fork, blinded} = await produceBlock(args, ctx, ALWAYS_BUILDER);
    const block = blinded || !isForkPostBellatrix(fork) ? contents.block : beaconBlockToBlinded(ctx.chain.config, contents.block as Parameters<typeof beaconBlockToBlinded>[1]);
    return {data: {block: block as BeaconBlock, kzgProofs: [], blobs: []}, meta: {version: fork}};
  },

  async produceAttestationData({slot, committeeIndex}, ctx) {
    assertNotSyncing(ctx);
    assertHeadNotOptimistic(ctx);
    assertNotFutureSlot(ctx, slot);
    // from electra on the index is always 0: one answer serves every committee of the slot
    const index = ctx.chain.config.getForkSeq(slot) >= ForkSeq.electra ? 0 : committeeIndex;
    const key = `attestation_data:${headKey(ctx.chain)}:${slot}:${index}`;
    return {data: await answerCacheOf(ctx.chain).ofHeadGet(key, () => ctx.chain.produceAttestationData(committeeIndex, slot))};
  },

  async getAggregatedAttestationV2({attestationDataRoot, slot, committeeIndex}, {chain, pools}) {
    const aggregate = pools.attestations.getAggregate(slot, attestationDataRoot, committeeIndex);
    if (!aggregate) throw notFound("No matching attestation found");
    return {data: aggregate, meta: {version: chain.config.getForkName(slot)}};
  },

  async getAggregatedAttestation({attestationDataRoot, slot}, {chain, pools}) {
    assertAttestationFormat(chain.config, slot, false);
    const aggregate = pools.attestations.getAggregate(slot, attestationDataRoot);
    if (!aggregate) throw notFound("No matching attestation found");
    return {data: aggregate};
  },

  async publishAggregateAndProofsV2({signedAggregateAndProofs, fork}, ctx) {
    await submitEach(signedAggregateAndProofs, "aggregate and proofs", async (signed) => {
      assertAttestationFormat(ctx.chain.config, signed.message.aggregate.data.slot, isForkPostElectra(fork));
      await ctx.pools.attestations.submitAggregateAndProof(signed);
      broadcast(ctx, {type: "beacon_aggregate_and_proof", data: signed});
    });
  },

  async publishAggregateAndProofs({signedAggregateAndProofs}, ctx) {
    await submitEach(signedAggregateAndProofs, "aggregate and proofs", async (signed) => {
      assertAttestationFormat(ctx.chain.config, signed.message.aggregate.data.slot, false);
      await ctx.pools.attestations.submitAggregateAndProof(signed);
      broadcast(ctx, {type: "beacon_aggregate_and_proof", data: signed});
    });
  },

  // Without a network there are no subnets to join: the pools aggregate every attestation they see.
  async prepareBeaconCommitteeSubnet({subscriptions}, {network}) {
    if (!network) log.debug({count: subscriptions.length}, "Beacon committee subnet subscriptions (no network: nothing to join)");
    else rejectAsBadRequest(() => network.addCommitteeSubscriptions(subscriptions));
  },

  async prepareSyncCommitteeSubnets({subscriptions}, {network}) {
    if (!network) log.debug({count: subscriptions.length}, "Sync committee subnet subscriptions (no network: nothing to join)");
    else rejectAsBadRequest(() => network.addSyncCommitteeSubscriptions(subscriptions));
  },

  async produceSyncCommitteeContribution({slot, subcommitteeIndex, beaconBlockRoot}, {pools}) {
    if (subcommitteeIndex >= SYNC_COMMITTEE_SUBNET_COUNT) {
      throw badRequest(`Invalid subcommittee_index: ${subcommitteeIndex} (there are ${SYNC_COMMITTEE_SUBNET_COUNT})`);
    }
    const contribution = pools.syncCommittee.produceContribution(slot, subcommitteeIndex, beaconBlockRoot);
    if (!contribution) throw notFound("No sync committee contribution available");
    return {data: contribution};
  },

  async publishContributionAndProofs({contributionAndProofs}, ctx) {
    await submitEach(contributionAndProofs, "contribution and proofs", async (signed) => {
      await ctx.pools.syncCommittee.submitContributionAndProof(signed);
      broadcast(ctx, {type: "sync_committee_contribution_and_proof", data: signed});
    });
  },

  async prepareBeaconProposer({preparations}, {node}) {
    for (const {validatorIndex, feeRecipient} of preparations) node.setProposerFeeRecipient(validatorIndex, feeRecipient);
  },

  async getLiveness({epoch, indices}, ctx) {
    assertNotSyncing(ctx);
    const current = currentEpoch(ctx);
    if (epoch + 1 < current || epoch > current + 1) throw badRequest(`Invalid epoch: ${epoch} (the previous, current or next epoch of ${current})`);
    if (indices.length === 0) throw badRequest("Invalid request body: no validator indices");
    const count = ctx.chain.getHeadState().validators.length;
    const unknown = indices.find((index) => index >= count);
    if (unknown !== undefined) throw badRequest(`Invalid validator index: ${unknown}`);
    return {data: indices.map((index) => ({index, isLive: ctx.chain.liveness.isLive(epoch, index)}))};
  },

  /** Verified and kept for active and pending validators (the spec leaves the others out); with `--builder`, sent to the relay. */
  async registerValidator({registrations}, {chain, node, builder}) {
    const state = chain.getHeadState();
    const epoch = computeEpochAtSlot(state.slot);
    await submitEach(registrations, "validator registrations", async (signed) => {
      if (!isValidRegistrationSignature(chain.config, signed)) throw badRequest("invalid signature");
      const index = state.epochCtx.getValidatorIndex(signed.message.pubkey);
      if (index === null || index === undefined || index >= state.validators.length || state.validators.getReadonly(index).exitEpoch <= epoch) {
        log.debug({pubkey: toHex(signed.message.pubkey)}, "Registration of an unknown or exited validator ignored");
        return;
      }
      node.setValidatorRegistration(signed.message);
      builder?.register(signed);
    });
  },

  submitBeaconCommitteeSelections: notImplemented(SELECTIONS_NOT_IMPLEMENTED),
  submitSyncCommitteeSelections: notImplemented(SELECTIONS_NOT_IMPLEMENTED),
};

/** Runs a batch the network validates as a whole (nothing applied when it throws): its reason becomes a 400. */
function rejectAsBadRequest(apply: () => void): void {
  try {
    apply();
  } catch (e) {
    throw badRequest((e as Error).message);
  }
}

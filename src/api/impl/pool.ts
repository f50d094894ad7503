import type {ChainForkConfig} from "@lodestar/config";
import {type ForkName, isForkPostElectra} from "@lodestar/params";
import type {Attestation, phase0} from "@lodestar/types";
import type {IBeaconChain} from "../../chain/interface.ts";
import type {OperationPools} from "../../pools/index.ts";
import {PoolError} from "../../pools/types.ts";
import {ApiError, type IndexedFailure, badRequest, renderError} from "../errors.ts";
import type {AttestationFilter, poolRoutes} from "../routes/pool.ts";
import type {Handlers} from "../routes/types.ts";
import {type ApiContext, broadcast} from "./context.ts";
import {useNewerRoute} from "./newerRoute.ts";
import {workSlicer} from "../workSlices.ts";

/** Handlers of the Beacon tag's pool routes, and the batch rule every list submission follows. */

/**
 * Submits each item on its own: valid items are applied, and the rejected ones are reported
 * together, by index, in one 400 (`IndexedErrorMessage`).
 */
export async function submitEach<T>(items: T[], what: string, submit: (item: T) => Promise<void>): Promise<void> {
  const failures: IndexedFailure[] = [];
  // a large batch runs in slices: the node's own work goes on between them
  const nextSlice = workSlicer();
  // a group is submitted at once, so its signatures are checked in one batch
  for (let start = 0; start < items.length; start += SUBMITTED_TOGETHER) {
    const group = items.slice(start, start + SUBMITTED_TOGETHER);
    const outcomes = await Promise.allSettled(group.map((item) => submit(item)));
    outcomes.forEach((outcome, i) => {
      if (outcome.status === "fulfilled") return;
      const err = outcome.reason;
      const message = err instanceof PoolError ? err.reason : renderError(err, `submit ${what}`).body.message;
      failures.push({index: start + i, message});
    });
    await nextSlice();
  }
  if (failures.length > 0) throw new ApiError(400, `${failures.length} of ${items.length} ${what} failed`, failures);
}

/** items of one submission checked together (one BLS batch holds 128 sets: an aggregate has three) */
const SUBMITTED_TOGETHER = 32;

/** Rejects an item whose slot lies in a fork that expects the other attestation format. */
export function assertAttestationFormat(config: ChainForkConfig, slot: number, electraFormat: boolean): void {
  const slotFork: ForkName = config.getForkName(slot);
  if (isForkPostElectra(slotFork) !== electraFormat) {
    throw new ApiError(400, `slot ${slot} is in fork ${slotFork}, which expects ${electraFormat ? "pre-electra" : "electra"} attestation objects`);
  }
}

/** Submits one operation; the pool's reason for rejecting it becomes a 400. */
async function submitOne(submit: () => Promise<void>): Promise<void> {
  try {
    await submit();
  } catch (err) {
    if (err instanceof PoolError) throw badRequest(err.reason);
    throw err;
  }
}

/** The fork of the current slot: the format of the operations the node accepts and serves now. */
function activeFork(chain: IBeaconChain): ForkName {
  return chain.config.getForkName(chain.currentSlot());
}

/** The pooled attestations matching `filter` whose format (electra or not) is `electraFormat`. */
function pooledAttestations(chain: IBeaconChain, pools: OperationPools, filter: AttestationFilter, electraFormat: boolean): Attestation[] {
  return pools.attestations
    .getAll({slot: filter.slot, committeeIndex: filter.committeeIndex})
    .filter((att) => isForkPostElectra(chain.config.getForkName(att.data.slot)) === electraFormat);
}

/** The v1 attester slashing submissions carry pre-electra objects only. */
function assertPreElectraSlashings(chain: IBeaconChain, operationId: string, newer: "submitPoolAttesterSlashingsV2"): void {
  const fork = activeFork(chain);
  if (isForkPostElectra(fork)) throw useNewerRoute(`${operationId} carries pre-electra attester slashings only, and the current fork is ${fork}`, newer);
}

export const poolHandlers: Handlers<typeof poolRoutes, ApiContext> = {
  async getPoolAttestationsV2(filter, {chain, pools}) {
    const version = chain.config.getForkName(filter.slot ?? chain.currentSlot());
    return {data: pooledAttestations(chain, pools, filter, isForkPostElectra(version)), meta: {version}};
  },

  /** The pooled attestations the old type can carry: none from electra on (200, an empty list, for old clients). */
  async getPoolAttestations(filter, {chain, pools}) {
    return {data: pooledAttestations(chain, pools, filter, false) as phase0.Attestation[]};
  },

  async submitPoolAttestationsV2({attestations, fork}, ctx) {
    await submitEach(attestations, "attestations", async (attestation) => {
      assertAttestationFormat(ctx.chain.config, attestation.data.slot, isForkPostElectra(fork));
      await ctx.pools.attestations.submitAttestation(attestation);
      broadcast(ctx, {type: "beacon_attestation", data: attestation});
    });
  },

  async submitPoolAttestations({attestations}, ctx) {
    await submitEach(attestations, "attestations", async (attestation) => {
      assertAttestationFormat(ctx.chain.config, attestation.data.slot, false);
      await ctx.pools.attestations.submitAttestation(attestation);
      broadcast(ctx, {type: "beacon_attestation", data: attestation});
    });
  },

  async getPoolAttesterSlashingsV2(_args, {chain, pools}) {
    return {data: pools.opPool.getAttesterSlashings(), meta: {version: activeFork(chain)}};
  },

  /** The pool's slashings are in the current fork's type: none the old type can carry from electra on (200, an empty list). */
  async getPoolAttesterSlashings(_args, {chain, pools}) {
    return {data: isForkPostElectra(activeFork(chain)) ? [] : (pools.opPool.getAttesterSlashings() as phase0.AttesterSlashing[])};
  },

  async submitPoolAttesterSlashingsV2({slashing}, ctx) {
    await submitOne(() => ctx.pools.opPool.submitAttesterSlashing(slashing));
    broadcast(ctx, {type: "attester_slashing", data: slashing});
  },

  async submitPoolAttesterSlashings({slashing}, ctx) {
    assertPreElectraSlashings(ctx.chain, "submitPoolAttesterSlashings", "submitPoolAttesterSlashingsV2");
    await submitOne(() => ctx.pools.opPool.submitAttesterSlashing(slashing));
    broadcast(ctx, {type: "attester_slashing", data: slashing});
  },

  async getPoolProposerSlashings(_args, {pools}) {
    return {data: pools.opPool.getProposerSlashings()};
  },

  async submitPoolProposerSlashings({slashing}, ctx) {
    await submitOne(() => ctx.pools.opPool.submitProposerSlashing(slashing));
    broadcast(ctx, {type: "proposer_slashing", data: slashing});
  },

  async getPoolVoluntaryExits(_args, {pools}) {
    return {data: pools.opPool.getVoluntaryExits()};
  },

  async submitPoolVoluntaryExit({exit}, ctx) {
    await submitOne(() => ctx.pools.opPool.submitVoluntaryExit(exit));
    broadcast(ctx, {type: "voluntary_exit", data: exit});
  },

  async getPoolBLSToExecutionChanges(_args, {pools}) {
    return {data: pools.opPool.getBlsToExecutionChanges()};
  },

  async submitPoolBLSToExecutionChange({changes}, ctx) {
    await submitEach(changes, "BLS to execution changes", async (change) => {
      await ctx.pools.opPool.submitBlsToExecutionChange(change);
      broadcast(ctx, {type: "bls_to_execution_change", data: change});
    });
  },

  async submitPoolSyncCommitteeSignatures({messages}, ctx) {
    await submitEach(messages, "sync committee signatures", async (message) => {
      await ctx.pools.syncCommittee.submitSyncCommitteeMessage(message);
      broadcast(ctx, {type: "sync_committee", data: message});
    });
  },
};

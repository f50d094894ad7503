import type {ChainForkConfig} from "@lodestar/config";
import {type ForkName, isForkPostElectra} from "@lodestar/params";
import {PoolError} from "../../pools/types.ts";
import {ApiError, type IndexedFailure, renderError} from "../errors.ts";
import type {poolRoutes} from "../routes/pool.ts";
import type {Handlers} from "../routes/types.ts";
import type {ApiContext} from "./context.ts";

/** Handlers of the Beacon tag's pool routes, and the batch rule every list submission follows. */

/**
 * Submits each item on its own: valid items are applied, and the rejected ones are reported
 * together, by index, in one 400 (`IndexedErrorMessage`).
 */
export async function submitEach<T>(items: T[], what: string, submit: (item: T) => Promise<void>): Promise<void> {
  const failures: IndexedFailure[] = [];
  for (const [index, item] of items.entries()) {
    try {
      await submit(item);
    } catch (err) {
      const message = err instanceof PoolError ? err.reason : renderError(err, `submit ${what}`).body.message;
      failures.push({index, message});
    }
  }
  if (failures.length > 0) throw new ApiError(400, `${failures.length} of ${items.length} ${what} failed`, failures);
}

/** Rejects an item whose slot lies in a fork that expects the other attestation format. */
export function assertAttestationFormat(config: ChainForkConfig, slot: number, electraFormat: boolean): void {
  const slotFork: ForkName = config.getForkName(slot);
  if (isForkPostElectra(slotFork) !== electraFormat) {
    throw new ApiError(400, `slot ${slot} is in fork ${slotFork}, which expects ${electraFormat ? "pre-electra" : "electra"} attestation objects`);
  }
}

export const poolHandlers: Handlers<typeof poolRoutes, ApiContext> = {
  async submitPoolAttestationsV2({attestations, fork}, {chain, pools}) {
    await submitEach(attestations, "attestations", async (attestation) => {
      assertAttestationFormat(chain.config, attestation.data.slot, isForkPostElectra(fork));
      await pools.attestations.submitAttestation(attestation);
    });
  },

  async submitPoolAttestations({attestations}, {chain, pools}) {
    await submitEach(attestations, "attestations", async (attestation) => {
      assertAttestationFormat(chain.config, attestation.data.slot, false);
      await pools.attestations.submitAttestation(attestation);
    });
  },

  async submitPoolSyncCommitteeSignatures({messages}, {pools}) {
    await submitEach(messages, "sync committee signatures", (message) => pools.syncCommittee.submitSyncCommitteeMessage(message));
  },
};

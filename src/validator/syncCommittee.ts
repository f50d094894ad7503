import {EPOCHS_PER_SYNC_COMMITTEE_PERIOD, ForkSeq, SYNC_COMMITTEE_SIZE, SYNC_COMMITTEE_SUBNET_COUNT} from "@lodestar/params";
import {computeEpochAtSlot, isSyncCommitteeAggregator} from "@lodestar/state-transition";
import type {Root, Slot, altair} from "@lodestar/types";
import {byteArrayEquals} from "@lodestar/utils";
import type {SyncDuty} from "./beaconApi.ts";
import {errorMessage, forEachSettled, publishDuties, type ValidatorContext} from "./context.ts";

const SUBCOMMITTEE_SIZE = SYNC_COMMITTEE_SIZE / SYNC_COMMITTEE_SUBNET_COUNT;

function syncPeriodOf(epoch: number): number {
  return Math.floor(epoch / EPOCHS_PER_SYNC_COMMITTEE_PERIOD);
}

/** The sync committee period whose members sign at `slot`: the one of `slot + 1` (altair validator.md). */
function dutyPeriodOfSlot(slot: Slot): number {
  return syncPeriodOf(computeEpochAtSlot(slot + 1));
}

/**
 * Sync committee messages and contributions (altair validator.md). Duties are per sync
 * committee period, fetched for the current and the next period at every epoch start.
 */
export class SyncCommitteeService {
  private readonly ctx: ValidatorContext;
  private readonly byPeriod = new Map<number, SyncDuty[]>();
  /** The head block root each slot's messages signed, for that slot's contributions. */
  private readonly signedRoots = new Map<Slot, Root>();

  constructor(ctx: ValidatorContext) {
    this.ctx = ctx;
  }

  /** At an epoch start: (re)fetch the duties of the current and the next sync committee period. */
  async pollDuties(epoch: number): Promise<void> {
    const period = syncPeriodOf(epoch);
    for (const known of this.byPeriod.keys()) if (known < period) this.byPeriod.delete(known);
    const nextPeriodStart = (period + 1) * EPOCHS_PER_SYNC_COMMITTEE_PERIOD;
    await Promise.all([this.fetch(period, epoch), this.fetch(period + 1, nextPeriodStart)]);
  }

  /** At the sync message deadline of `slot`: sign the head block root for every member of ours. */
  async produceMessages(slot: Slot): Promise<void> {
    const {api, signer, log} = this.ctx;
    const duties = this.dutiesAt(slot);
    if (duties.length === 0) return;
    const beaconBlockRoot = await api.getBlockRoot("head");
    // each key on its own: one that cannot sign (its remote signer down or without it) costs only its message
    const messages: altair.SyncCommitteeMessage[] = [];
    await forEachSettled(
      duties,
      async (duty) => {
        const signature = await signer.signSyncCommitteeMessage(duty.pubkey, slot, beaconBlockRoot);
        messages.push({slot, beaconBlockRoot, validatorIndex: duty.validatorIndex, signature});
      },
      (duty, err) => log.error({slot, validatorIndex: duty.validatorIndex, error: errorMessage(err)}, "Sync committee message not signed")
    );
    this.signedRoots.set(slot, beaconBlockRoot);
    for (const old of this.signedRoots.keys()) if (old < slot) this.signedRoots.delete(old);
    await publishDuties(this.ctx, "sync_committee_message", duties.length, messages.length, () => api.submitSyncCommitteeMessages(messages));
    if (messages.length > 0) log.info({slot, count: messages.length}, "Published sync committee messages");
  }

  /** At the contribution deadline of `slot`: contribute for each subcommittee where one of ours was selected. */
  async produceContributions(slot: Slot): Promise<void> {
    const {api, signer, log} = this.ctx;
    const beaconBlockRoot = this.signedRoots.get(slot);
    this.signedRoots.delete(slot);
    if (!beaconBlockRoot) return;

    const seats = this.dutiesAt(slot).flatMap((duty) =>
      [...new Set(duty.validatorSyncCommitteeIndices.map((i) => Math.floor(i / SUBCOMMITTEE_SIZE)))].map((subcommitteeIndex) => ({duty, subcommitteeIndex}))
    );
    // asked for all at once, the proofs are signed a few milliseconds' worth per turn, not one per turn;
    // a seat whose proof cannot be signed does not aggregate
    const proofs = await Promise.allSettled(seats.map(({duty, subcommitteeIndex}) => signer.signSyncSelectionProof(duty.pubkey, slot, subcommitteeIndex)));
    const selected = seats.flatMap((seat, i) => {
      const proof = proofs[i];
      if (proof.status === "fulfilled") return isSyncCommitteeAggregator(proof.value) ? [{...seat, selectionProof: proof.value}] : [];
      log.error({slot, validatorIndex: seat.duty.validatorIndex, error: errorMessage(proof.reason)}, "Sync selection proof not signed: no contribution from this seat");
      return [];
    });
    if (selected.length === 0) return;

    const contributions = new Map<number, Promise<altair.SyncCommitteeContribution>>();
    const signed: altair.SignedContributionAndProof[] = [];
    await forEachSettled(
      selected,
      async ({duty, subcommitteeIndex, selectionProof}) => {
        let contribution = contributions.get(subcommitteeIndex);
        if (!contribution) {
          contribution = api.produceSyncCommitteeContribution(slot, subcommitteeIndex, beaconBlockRoot);
          contributions.set(subcommitteeIndex, contribution);
        }
        const c = await contribution;
        if (c.slot !== slot || c.subcommitteeIndex !== subcommitteeIndex || !byteArrayEquals(c.beaconBlockRoot, beaconBlockRoot)) {
          throw new Error(`beacon node returned a contribution for slot ${c.slot} subcommittee ${c.subcommitteeIndex}`);
        }
        signed.push(await signer.signContributionAndProof(duty.pubkey, {aggregatorIndex: duty.validatorIndex, contribution: c, selectionProof}));
      },
      ({duty, subcommitteeIndex}, err) =>
        log.error({slot, validatorIndex: duty.validatorIndex, subcommitteeIndex, error: errorMessage(err)}, "Sync contribution failed")
    );
    if (signed.length === 0) return;
    await api.publishContributionAndProofs(signed);
    log.info({slot, count: signed.length}, "Published sync committee contributions");
  }

  private dutiesAt(slot: Slot): SyncDuty[] {
    if (this.ctx.config.getForkSeq(slot) < ForkSeq.altair) return [];
    // still ours: a key removed since the duties were fetched has none
    return (this.byPeriod.get(dutyPeriodOfSlot(slot)) ?? []).filter((d) => this.ctx.validators.owns(d.pubkey, d.validatorIndex));
  }

  /** Fetches a period's duties by asking for `epoch` in it; skipped before altair, failures logged. */
  private async fetch(period: number, epoch: number): Promise<void> {
    const {api, config, validators, log} = this.ctx;
    const indices = validators.indices;
    if (indices.length === 0 || config.getForkSeqAtEpoch(epoch) < ForkSeq.altair) return;
    try {
      const duties = await api.getSyncCommitteeDuties(epoch, indices);
      this.byPeriod.set(period, duties.filter((d) => validators.owns(d.pubkey, d.validatorIndex)));
    } catch (err) {
      log.error({period, epoch, error: errorMessage(err)}, "Failed to fetch sync committee duties");
    }
  }
}

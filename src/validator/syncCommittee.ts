import {EPOCHS_PER_SYNC_COMMITTEE_PERIOD, ForkSeq, SYNC_COMMITTEE_SIZE, SYNC_COMMITTEE_SUBNET_COUNT} from "@lodestar/params";
import {computeEpochAtSlot, isSyncCommitteeAggregator} from "@lodestar/state-transition";
import type {BLSSignature, Root, Slot, altair} from "@lodestar/types";
import {byteArrayEquals} from "@lodestar/utils";
import type {SyncDuty} from "./beaconApi.ts";
import {errorMessage, forEachSettled, nothingToAggregate, publishDuties, signedIfStillOurs, type ValidatorContext} from "./context.ts";
import {DutyStore} from "./dutyStore.ts";

const SUBCOMMITTEE_SIZE = SYNC_COMMITTEE_SIZE / SYNC_COMMITTEE_SUBNET_COUNT;

function syncPeriodOf(epoch: number): number {
  return Math.floor(epoch / EPOCHS_PER_SYNC_COMMITTEE_PERIOD);
}

/**
 * Sync committee selection proofs are signed this many slots before the contribution deadline
 * that uses them, half-way into a slot (as the attesters' selection proofs, and as Lighthouse
 * computes them ahead): not at the deadline, two thirds into the slot, where each seat's proof
 * and then its contribution were signed back to back, beside the aggregates of the slot.
 */
export const SYNC_SELECTION_PROOF_LOOKAHEAD_SLOTS = 1;

/** The sync committee period whose members sign at `slot`: the one of `slot + 1` (altair validator.md). */
function dutyPeriodOfSlot(slot: Slot): number {
  return syncPeriodOf(computeEpochAtSlot(slot + 1));
}

/**
 * Sync committee messages and contributions (altair validator.md). Duties are per sync
 * committee period, fetched for the current and the next period at every epoch start, and
 * again as soon as the keys change (a fetch begun before the change never overwrites what is
 * fetched after it: dutyStore.ts).
 */
export class SyncCommitteeService {
  private readonly ctx: ValidatorContext;
  private readonly byPeriod: DutyStore<SyncDuty[]>;
  /** The head block root each slot's messages signed, for that slot's contributions. */
  private readonly signedRoots = new Map<Slot, Root>();
  /** Selection proofs signed ahead, by slot, then by the seat's key and subcommittee (null: not ours any more). */
  private readonly proofs = new Map<Slot, Map<string, Promise<BLSSignature | null>>>();

  constructor(ctx: ValidatorContext) {
    this.ctx = ctx;
    this.byPeriod = new DutyStore(ctx.validators);
  }

  /** At an epoch start: (re)fetch the duties of the current and the next sync committee period. */
  async pollDuties(epoch: number): Promise<void> {
    await this.poll(epoch, false);
  }

  /** Any other slot: fetch the duties of the current and the next period again if the keys changed since (or the last fetch failed). */
  async pollChanged(epoch: number): Promise<void> {
    await this.poll(epoch, true);
  }

  private async poll(epoch: number, onlyStale: boolean): Promise<void> {
    const period = syncPeriodOf(epoch);
    this.byPeriod.forgetBefore(period);
    const nextPeriodStart = (period + 1) * EPOCHS_PER_SYNC_COMMITTEE_PERIOD;
    const periods: [period: number, epoch: number][] = [
      [period, epoch],
      [period + 1, nextPeriodStart],
    ];
    await Promise.all(periods.filter(([p]) => !onlyStale || this.byPeriod.current(p) === undefined).map(([p, e]) => this.fetch(p, e)));
  }

  /** At the sync message deadline of `slot`: sign the head block root for every member of ours. */
  async produceMessages(slot: Slot): Promise<void> {
    const {api, signer, log} = this.ctx;
    const duties = this.dutiesAt(slot);
    if (duties.length === 0) return;
    const beaconBlockRoot = await api.getBlockRoot("head");
    // each key on its own: one that cannot sign (its remote signer down or without it) costs only its message
    const signed: (altair.SyncCommitteeMessage | null)[] = [];
    await forEachSettled(
      duties,
      async (duty) => {
        const signature = await signedIfStillOurs(this.ctx, duty, () => signer.signSyncCommitteeMessage(duty.pubkey, slot, beaconBlockRoot));
        signed.push(signature && {slot, beaconBlockRoot, validatorIndex: duty.validatorIndex, signature});
      },
      (duty, err) => log.error({slot, validatorIndex: duty.validatorIndex, error: errorMessage(err)}, "Sync committee message not signed")
    );
    const messages = signed.filter((m): m is altair.SyncCommitteeMessage => m !== null);
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

    const seats = this.seatsAt(slot);
    // signed ahead (signSelectionProofs), or now for a seat that was not known then
    const signedAhead = this.proofs.get(slot);
    this.proofs.delete(slot);
    const proofs = await Promise.allSettled(seats.map((seat) => signedAhead?.get(seatKey(seat)) ?? this.signProof(slot, seat)));
    const selected = seats.flatMap((seat, i) => {
      const proof = proofs[i];
      if (proof.status === "rejected") {
        log.error({slot, validatorIndex: seat.duty.validatorIndex, error: errorMessage(proof.reason)}, "Sync selection proof not signed: no contribution from this seat");
        return [];
      }
      return proof.value !== null && isSyncCommitteeAggregator(proof.value) ? [{...seat, selectionProof: proof.value}] : [];
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
        const contributionAndProof = await signedIfStillOurs(this.ctx, duty, () =>
          signer.signContributionAndProof(duty.pubkey, {aggregatorIndex: duty.validatorIndex, contribution: c, selectionProof})
        );
        if (contributionAndProof) signed.push(contributionAndProof);
      },
      ({duty, subcommitteeIndex}, err) =>
        nothingToAggregate(err)
          ? log.warn({slot, validatorIndex: duty.validatorIndex, subcommitteeIndex, reason: errorMessage(err)}, "Sync contribution skipped: the beacon node has no sync committee messages to aggregate")
          : log.error({slot, validatorIndex: duty.validatorIndex, subcommitteeIndex, error: errorMessage(err)}, "Sync contribution failed")
    );
    if (signed.length === 0) return;
    await api.publishContributionAndProofs(signed);
    log.info({slot, count: signed.length}, "Published sync committee contributions");
  }

  /**
   * Half-way into a slot: the selection proofs of every seat of ours at `slot` (the slot
   * SYNC_SELECTION_PROOF_LOOKAHEAD_SLOTS ahead) not signed yet, kept for its contribution deadline.
   */
  async signSelectionProofs(slot: Slot): Promise<void> {
    for (const kept of this.proofs.keys()) if (kept < slot - SYNC_SELECTION_PROOF_LOOKAHEAD_SLOTS) this.proofs.delete(kept);
    const seats = this.seatsAt(slot);
    if (seats.length === 0) return;
    const kept = this.proofs.get(slot) ?? new Map<string, Promise<BLSSignature | null>>();
    this.proofs.set(slot, kept);
    for (const seat of seats) {
      const key = seatKey(seat);
      if (kept.has(key)) continue;
      const proof = this.signProof(slot, seat);
      // one that could not be signed now (a remote signer away) is signed again at the deadline
      proof.catch(() => kept.get(key) === proof && kept.delete(key));
      kept.set(key, proof);
    }
    await Promise.allSettled(kept.values());
  }

  /** Our seats at `slot`: each duty once per subcommittee it sits in. */
  private seatsAt(slot: Slot): Seat[] {
    return this.dutiesAt(slot).flatMap((duty) =>
      [...new Set(duty.validatorSyncCommitteeIndices.map((i) => Math.floor(i / SUBCOMMITTEE_SIZE)))].map((subcommitteeIndex) => ({duty, subcommitteeIndex}))
    );
  }

  private signProof(slot: Slot, {duty, subcommitteeIndex}: Seat): Promise<BLSSignature | null> {
    return signedIfStillOurs(this.ctx, duty, () => this.ctx.signer.signSyncSelectionProof(duty.pubkey, slot, subcommitteeIndex));
  }

  private dutiesAt(slot: Slot): SyncDuty[] {
    if (this.ctx.config.getForkSeq(slot) < ForkSeq.altair) return [];
    // still ours: a key removed since the duties were fetched has none
    return (this.byPeriod.latest(dutyPeriodOfSlot(slot)) ?? []).filter((d) => this.ctx.validators.owns(d.pubkey, d.validatorIndex));
  }

  /** Fetches a period's duties by asking for `epoch` in it; skipped before altair, failures logged. */
  private async fetch(period: number, epoch: number): Promise<void> {
    const {api, config, validators, log} = this.ctx;
    if (config.getForkSeqAtEpoch(epoch) < ForkSeq.altair) return;
    try {
      await this.byPeriod.fetch(period, async ({indices}) =>
        indices.length === 0 ? [] : (await api.getSyncCommitteeDuties(epoch, indices)).filter((d) => validators.owns(d.pubkey, d.validatorIndex))
      );
    } catch (err) {
      log.error({period, epoch, error: errorMessage(err)}, "Failed to fetch sync committee duties");
    }
  }
}

interface Seat {
  duty: SyncDuty;
  subcommitteeIndex: number;
}

/** A seat's key among the proofs signed ahead: its validator's key and subcommittee (a key removed and another added get new proofs). */
function seatKey({duty, subcommitteeIndex}: Seat): string {
  return `${Buffer.from(duty.pubkey).toString("hex")}:${subcommitteeIndex}`;
}

import {BitArray} from "@chainsafe/ssz";
import {type ForkName, isForkPostElectra, SLOTS_PER_EPOCH} from "@lodestar/params";
import {computeEpochAtSlot, isAggregatorFromCommitteeLength} from "@lodestar/state-transition";
import {ssz} from "@lodestar/types";
import type {AggregateAndProof, Attestation, BLSSignature, SignedAggregateAndProof, Slot, electra, phase0} from "@lodestar/types";
import {byteArrayEquals, toHex} from "@lodestar/utils";
import type {AttesterDuty} from "./beaconApi.ts";
import {errorMessage, forEachSettled, nothingToAggregate, publishDuties, signedIfStillOurs, type ValidatorContext} from "./context.ts";
import {DutyStore, type KeySet} from "./dutyStore.ts";

/** An attester duty with its aggregation selection, computed once when the duty arrives. */
interface ScheduledDuty extends AttesterDuty {
  /** null when it could not be signed (the duty attests, but does not aggregate) */
  selectionProof: BLSSignature | null;
  isAggregator: boolean;
}

interface EpochDuties {
  dependentRoot: string;
  duties: ScheduledDuty[];
  /** Whether prepareBeaconCommitteeSubnet went through; retried at the next poll if not. */
  subscribed: boolean;
}

/**
 * Attestations and their aggregation (phase0/electra validator.md).
 *
 * Duties are kept for the current and next epoch. The next epoch's duties are re-fetched at
 * every slot: their dependent root is the last block of the current epoch's predecessor, so
 * a re-org there shows up as a new dependent root, upon which the selection proofs are
 * recomputed and the subnets prepared again. The current epoch's are fetched again when a head
 * event's dependent root says they changed (a re-org deeper than an epoch: `onHead`), or every
 * slot while no head events come. Duties fetched for an earlier key set (before a key
 * was imported, resolved, deleted or released) are fetched again at the next poll or duty, and
 * a fetch that began before the change never overwrites those of the new key set (dutyStore.ts).
 */
export class AttesterService {
  private readonly ctx: ValidatorContext;
  private readonly byEpoch: DutyStore<EpochDuties>;
  /** Attestation data signed at a slot per committee index, for that slot's aggregation. */
  private readonly signedData = new Map<Slot, Map<number, phase0.AttestationData>>();

  constructor(ctx: ValidatorContext) {
    this.ctx = ctx;
    this.byEpoch = new DutyStore(ctx.validators);
  }

  /**
   * Each slot: fetch the epoch's duties if unknown for the current keys (or, `refetchCurrent`,
   * while no head events say when their dependent root changes, again), re-fetch the next
   * epoch's; forget older epochs.
   */
  async pollDuties(epoch: number, refetchCurrent = false): Promise<void> {
    this.byEpoch.forgetBefore(epoch);
    await Promise.all([this.byEpoch.current(epoch) && !refetchCurrent ? undefined : this.fetch(epoch), this.fetch(epoch + 1)]);
  }

  /**
   * A head of epoch `epoch`: the duties of that epoch depend on `previousRoot`, those of the next
   * on `currentRoot` (the head event's dependent roots). Duties kept with another root were
   * computed on a branch the node left: they are fetched again.
   */
  async onHead(epoch: number, previousRoot: string, currentRoot: string): Promise<void> {
    const stale = (e: number, root: string): boolean => {
      const kept = this.byEpoch.latest(e);
      return kept !== undefined && kept.dependentRoot !== root;
    };
    await Promise.all([stale(epoch, previousRoot) ? this.fetch(epoch) : undefined, stale(epoch + 1, currentRoot) ? this.fetch(epoch + 1) : undefined]);
  }

  /** At the attestation deadline of `slot`: sign and submit the attestations of our duties at `slot`. */
  async attest(slot: Slot): Promise<void> {
    const {api, config, signer, log} = this.ctx;
    const duties = await this.dutiesAt(slot);
    if (duties.length === 0) return;
    const fork = config.getForkName(slot);
    const postElectra = isForkPostElectra(fork);
    // From electra on the data carries index 0 whatever the committee: one request serves all.
    const dataKey = (duty: AttesterDuty): number => (postElectra ? 0 : duty.committeeIndex);
    const dataByKey = new Map<number, phase0.AttestationData>();
    await forEachSettled(
      [...new Set(duties.map(dataKey))],
      async (committeeIndex) => {
        const data = await api.produceAttestationData(committeeIndex, slot);
        checkAttestationData(data, slot, committeeIndex);
        dataByKey.set(committeeIndex, data);
      },
      (committeeIndex, err) => log.error({slot, committeeIndex, error: errorMessage(err)}, "Failed to produce attestation data")
    );

    const attestations: (phase0.Attestation | electra.SingleAttestation)[] = [];
    const signedAtSlot = new Map<number, phase0.AttestationData>();
    await forEachSettled(
      duties,
      async (duty) => {
        const data = dataByKey.get(dataKey(duty));
        if (!data) return;
        // a key deleted since its duties were read signs nothing (the signer refuses it)
        const signature = await signedIfStillOurs(this.ctx, duty, () => signer.signAttestationData(duty.pubkey, data));
        if (!signature) return;
        signedAtSlot.set(duty.committeeIndex, data);
        attestations.push(
          postElectra
            ? {committeeIndex: duty.committeeIndex, attesterIndex: duty.validatorIndex, data, signature}
            : {aggregationBits: BitArray.fromSingleBit(duty.committeeLength, duty.validatorCommitteeIndex), data, signature}
        );
      },
      (duty, err) => log.error({slot, validatorIndex: duty.validatorIndex, error: errorMessage(err)}, "Attestation refused or failed")
    );
    this.signedData.set(slot, signedAtSlot);
    for (const old of this.signedData.keys()) if (old < slot - SLOTS_PER_EPOCH) this.signedData.delete(old);
    if (attestations.length === 0) return this.ctx.duties?.missed("attestation", duties.length);
    await publishDuties(this.ctx, "attestation", duties.length, attestations.length, () => api.submitAttestations(attestations, fork));
    log.info({slot, count: attestations.length}, "Published attestations");
  }

  /** At the aggregation deadline of `slot`: aggregate for the committees where one of ours was selected. */
  async aggregate(slot: Slot): Promise<void> {
    const {api, signer, log} = this.ctx;
    const aggregators = (this.byEpoch.latest(computeEpochAtSlot(slot))?.duties ?? []).filter(
      (d) => d.slot === slot && d.isAggregator && this.ctx.validators.owns(d.pubkey, d.validatorIndex)
    );
    const signedAtSlot = this.signedData.get(slot);
    this.signedData.delete(slot);
    if (aggregators.length === 0 || !signedAtSlot) return;

    const signed: SignedAggregateAndProof[] = [];
    let fork: ForkName | undefined;
    const committees = [...new Set(aggregators.map((d) => d.committeeIndex))].filter((ci) => signedAtSlot.has(ci));
    await forEachSettled(
      committees,
      async (committeeIndex) => {
        const dataRoot = ssz.phase0.AttestationData.hashTreeRoot(signedAtSlot.get(committeeIndex)!);
        const result = await api.getAggregatedAttestation(dataRoot, slot, committeeIndex);
        checkAggregate(result.attestation, dataRoot, committeeIndex);
        fork = result.fork;
        const ours = aggregators.filter((d) => d.committeeIndex === committeeIndex);
        const messages = ours.map((duty) => ({aggregatorIndex: duty.validatorIndex, aggregate: result.attestation, selectionProof: duty.selectionProof!}) as AggregateAndProof);
        const signedOurs = await Promise.all(ours.map((duty, i) => signedIfStillOurs(this.ctx, duty, () => signer.signAggregateAndProof(duty.pubkey, messages[i]))));
        signed.push(...signedOurs.filter((s): s is SignedAggregateAndProof => s !== null));
      },
      (committeeIndex, err) =>
        nothingToAggregate(err)
          ? log.warn({slot, committeeIndex, reason: errorMessage(err)}, "Aggregation skipped: the beacon node has no attestation to aggregate")
          : log.error({slot, committeeIndex, error: errorMessage(err)}, "Aggregation failed")
    );
    if (signed.length === 0 || fork === undefined) return;
    await api.publishAggregateAndProofs(signed, fork);
    log.info({slot, count: signed.length}, "Published aggregates");
  }

  private async dutiesAt(slot: Slot): Promise<ScheduledDuty[]> {
    const epoch = computeEpochAtSlot(slot);
    const epochDuties = this.byEpoch.current(epoch) ?? (await this.fetch(epoch));
    // still ours: a key removed since the duties were fetched has none
    return epochDuties?.duties.filter((d) => d.slot === slot && this.ctx.validators.owns(d.pubkey, d.validatorIndex)) ?? [];
  }

  /** Fetches an epoch's duties for the current keys (one request at a time per epoch and key set); failures are logged and give the last ones kept. */
  private fetch(epoch: number): Promise<EpochDuties | undefined> {
    return this.byEpoch.fetch(epoch, (keys, kept) => this.load(epoch, keys, kept)).catch((err) => {
      this.ctx.log.error({epoch, error: errorMessage(err)}, "Failed to fetch attester duties");
      return this.byEpoch.latest(epoch);
    });
  }

  /** `kept`: the duties fetched earlier for the same keys, kept as they are if their dependent root has not changed. */
  private async load(epoch: number, {indices}: KeySet, kept: EpochDuties | undefined): Promise<EpochDuties | undefined> {
    const {api, signer, validators, log} = this.ctx;
    if (indices.length === 0) return undefined;
    const response = await api.getAttesterDuties(epoch, indices);
    const dependentRoot = toHex(response.dependentRoot);
    if (kept?.dependentRoot === dependentRoot) {
      if (!kept.subscribed) await this.subscribe(epoch, kept);
      return kept;
    }
    const previous = this.byEpoch.latest(epoch)?.dependentRoot;
    if (previous !== undefined && previous !== dependentRoot) log.info({epoch, previous, dependentRoot}, "Attester duties changed with their dependent root");

    const scheduled = await Promise.all(
      response.duties
        .filter((d) => validators.owns(d.pubkey, d.validatorIndex))
        .map(async (d): Promise<ScheduledDuty | null> => {
          try {
            const selectionProof = await signedIfStillOurs(this.ctx, d, () => signer.signSelectionProof(d.pubkey, d.slot));
            return selectionProof && {...d, selectionProof, isAggregator: isAggregatorFromCommitteeLength(d.committeeLength, selectionProof)};
          } catch (err) {
            // one key that cannot sign (its remote signer down or without it) keeps the others' duties
            log.error({epoch, slot: d.slot, validatorIndex: d.validatorIndex, error: errorMessage(err)}, "Selection proof not signed: the validator attests but does not aggregate");
            return {...d, selectionProof: null, isAggregator: false};
          }
        })
    );
    const duties = scheduled.filter((d): d is ScheduledDuty => d !== null);
    const epochDuties: EpochDuties = {dependentRoot, duties, subscribed: false};
    log.debug({epoch, duties: duties.length, aggregators: duties.filter((d) => d.isAggregator).length}, "Attester duties");
    await this.subscribe(epoch, epochDuties);
    return epochDuties;
  }

  /** Asks the node to join the subnets of the epoch's committees (and aggregate where we do); failures are logged. */
  private async subscribe(epoch: number, epochDuties: EpochDuties): Promise<void> {
    const {duties} = epochDuties;
    try {
      if (duties.length > 0) {
        await this.ctx.api.prepareBeaconCommitteeSubnet(
          duties.map((d) => ({validatorIndex: d.validatorIndex, committeeIndex: d.committeeIndex, committeesAtSlot: d.committeesAtSlot, slot: d.slot, isAggregator: d.isAggregator}))
        );
      }
      epochDuties.subscribed = true;
    } catch (err) {
      this.ctx.log.error({epoch, error: errorMessage(err)}, "Failed to prepare beacon committee subnets");
    }
  }
}

/** The data must be for our slot, our committee (index 0 from electra on) and the slot's epoch. */
function checkAttestationData(data: phase0.AttestationData, slot: Slot, committeeIndex: number): void {
  if (data.slot !== slot || data.index !== committeeIndex) {
    throw new Error(`beacon node returned attestation data for slot ${data.slot} index ${data.index}`);
  }
  if (data.target.epoch !== computeEpochAtSlot(slot) || data.source.epoch > data.target.epoch) {
    throw new Error(`beacon node returned attestation data with source ${data.source.epoch} target ${data.target.epoch}`);
  }
}

function checkAggregate(attestation: Attestation, dataRoot: Uint8Array, committeeIndex: number): void {
  if (!byteArrayEquals(ssz.phase0.AttestationData.hashTreeRoot(attestation.data), dataRoot)) {
    throw new Error("beacon node returned an aggregate of other attestation data");
  }
  const committeeBits = (attestation as electra.Attestation).committeeBits;
  if (committeeBits !== undefined && !committeeBits.get(committeeIndex)) {
    throw new Error(`beacon node returned an aggregate without committee ${committeeIndex}`);
  }
}

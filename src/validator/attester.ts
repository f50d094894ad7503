import {BitArray} from "@chainsafe/ssz";
import {type ForkName, isForkPostElectra, SLOTS_PER_EPOCH} from "@lodestar/params";
import {computeEpochAtSlot, isAggregatorFromCommitteeLength} from "@lodestar/state-transition";
import {ssz} from "@lodestar/types";
import type {AggregateAndProof, Attestation, BLSSignature, SignedAggregateAndProof, Slot, electra, phase0} from "@lodestar/types";
import {byteArrayEquals, toHex} from "@lodestar/utils";
import type {AttesterDuty} from "./beaconApi.ts";
import {errorMessage, forEachSettled, nothingToAggregate, publishDuties, signedIfStillOurs, type ValidatorContext} from "./context.ts";
import {DutyStore, type KeySet} from "./dutyStore.ts";

/**
 * Selection proofs are signed this many slots before their duty's slot, half-way into a slot
 * (Lighthouse's SELECTION_PROOF_SLOT_LOOKAHEAD), not all when an epoch's duties arrive: those
 * arrive at the epoch's start, when every validator client asks the node its duties, and a
 * thousand keys' proofs would hold the node's event loop for most of a second.
 */
export const SELECTION_PROOF_LOOKAHEAD_SLOTS = 8;

/** An attester duty with its aggregation selection, signed once, SELECTION_PROOF_LOOKAHEAD_SLOTS ahead (or on arrival, if sooner). */
interface ScheduledDuty extends AttesterDuty {
  /** undefined until signed; null when it could not be signed (the duty attests, but does not aggregate) */
  selectionProof?: BLSSignature | null;
  isAggregator: boolean;
  /** set when its selection proof is asked for: asked once */
  selecting?: Promise<void>;
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
 * signed again and the subnets prepared again. The subnets are prepared when duties arrive, as
 * aggregators for the duties whose selection proofs are signed by then, and again for the
 * aggregators found as the later proofs are signed (`signSelectionProofs`). The current epoch's are fetched again when a head
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

  private readonly currentSlot: () => Slot;

  constructor(ctx: ValidatorContext, currentSlot: () => Slot) {
    this.ctx = ctx;
    this.currentSlot = currentSlot;
    this.byEpoch = new DutyStore(ctx.validators);
  }

  /**
   * Signs the selection proofs of the duties at slots up to `lastSlot` not signed yet (half-way
   * into each slot, for the slot SELECTION_PROOF_LOOKAHEAD_SLOTS ahead), and asks the node to
   * aggregate on the subnets where they select one of ours.
   */
  async signSelectionProofs(lastSlot: Slot): Promise<void> {
    const epoch = computeEpochAtSlot(lastSlot);
    const now = this.currentSlot();
    const due = [epoch - 1, epoch].flatMap((e) => this.byEpoch.latest(e)?.duties ?? []).filter((d) => d.slot >= now && d.slot <= lastSlot && d.selecting === undefined);
    if (due.length === 0) return;
    await this.select(epoch, due);
    const aggregators = due.filter((d) => d.isAggregator);
    this.ctx.log.debug({lastSlot, signed: due.length, aggregators: aggregators.length}, "Selection proofs");
    if (aggregators.length > 0) await this.prepareSubnets(epoch, aggregators);
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
    const epoch = computeEpochAtSlot(slot);
    const atSlot = (this.byEpoch.latest(epoch)?.duties ?? []).filter((d) => d.slot === slot && this.ctx.validators.owns(d.pubkey, d.validatorIndex));
    // selected long before as a rule; a selection still in flight (its round late) is awaited, a missed one made now
    await this.select(epoch, atSlot);
    const aggregators = atSlot.filter((d) => d.isAggregator);
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
    const {api, validators, log} = this.ctx;
    if (indices.length === 0) return undefined;
    const response = await api.getAttesterDuties(epoch, indices);
    const dependentRoot = toHex(response.dependentRoot);
    if (kept?.dependentRoot === dependentRoot) {
      if (!kept.subscribed) await this.subscribe(epoch, kept);
      return kept;
    }
    const previous = this.byEpoch.latest(epoch)?.dependentRoot;
    if (previous !== undefined && previous !== dependentRoot) log.info({epoch, previous, dependentRoot}, "Attester duties changed with their dependent root");

    const duties: ScheduledDuty[] = response.duties.filter((d) => validators.owns(d.pubkey, d.validatorIndex)).map((d) => ({...d, isAggregator: false}));
    // this slot's and the next: the next half-slot round may come too late for their subnets; the others wait for theirs
    const now = this.currentSlot();
    await this.select(epoch, duties.filter((d) => d.slot >= now && d.slot <= now + 1));
    const epochDuties: EpochDuties = {dependentRoot, duties, subscribed: false};
    log.debug({epoch, duties: duties.length}, "Attester duties");
    await this.subscribe(epoch, epochDuties);
    return epochDuties;
  }

  /**
   * Signs the selection proofs of `duties` (each once) and marks their aggregators. A key that
   * cannot sign (its remote signer down or without it) attests but does not aggregate; a key
   * deleted meanwhile does neither.
   */
  private async select(epoch: number, duties: ScheduledDuty[]): Promise<void> {
    const {signer, log} = this.ctx;
    const selectOne = async (d: ScheduledDuty): Promise<void> => {
      try {
        const selectionProof = await signedIfStillOurs(this.ctx, d, () => signer.signSelectionProof(d.pubkey, d.slot));
        d.selectionProof = selectionProof;
        d.isAggregator = selectionProof !== null && isAggregatorFromCommitteeLength(d.committeeLength, selectionProof);
      } catch (err) {
        log.error({epoch, slot: d.slot, validatorIndex: d.validatorIndex, error: errorMessage(err)}, "Selection proof not signed: the validator attests but does not aggregate");
        d.selectionProof = null;
      }
    };
    // asked together: the signer signs them a few milliseconds' worth per turn of the event loop
    await Promise.all(duties.map((d) => (d.selecting ??= selectOne(d))));
  }

  /** Asks the node to join the subnets of the epoch's committees (and aggregate where we do); failures are logged. */
  private async subscribe(epoch: number, epochDuties: EpochDuties): Promise<void> {
    if (await this.prepareSubnets(epoch, epochDuties.duties)) epochDuties.subscribed = true;
  }

  private async prepareSubnets(epoch: number, duties: ScheduledDuty[]): Promise<boolean> {
    try {
      if (duties.length > 0) {
        await this.ctx.api.prepareBeaconCommitteeSubnet(
          duties.map((d) => ({validatorIndex: d.validatorIndex, committeeIndex: d.committeeIndex, committeesAtSlot: d.committeesAtSlot, slot: d.slot, isAggregator: d.isAggregator}))
        );
      }
      return true;
    } catch (err) {
      this.ctx.log.error({epoch, error: errorMessage(err)}, "Failed to prepare beacon committee subnets");
      return false;
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

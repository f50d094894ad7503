import type {BeaconConfig} from "@lodestar/config";
import {ForkSeq} from "@lodestar/params";
import {computeEpochAtSlot} from "@lodestar/state-transition";
import {fromHex, toHex} from "@lodestar/utils";
import {ApiClientError} from "../api/client.ts";
import {AttesterService, SELECTION_PROOF_LOOKAHEAD_SLOTS} from "./attester.ts";
import {BuilderRegistrations, type BuilderModeOptions} from "./builderMode.ts";
import type {SlotClock} from "./clock.ts";
import {errorMessage, type ValidatorContext} from "./context.ts";
import type {DoppelgangerProtection} from "./doppelganger.ts";
import type {ProposerSettings} from "./keys/proposerSettings.ts";
import type {HeadEvent} from "./beaconApi.ts";
import {HeadWatch} from "./headWatch.ts";
import {ProposerService} from "./proposer.ts";
import {SYNC_SELECTION_PROOF_LOOKAHEAD_SLOTS, SyncCommitteeService} from "./syncCommittee.ts";

const ZERO_ADDRESS = "0x" + "00".repeat(20);

/** What the beacon node measured of its clock against its peers' (null: nothing measured yet). */
export type ClockCheck = () => {offsetMs: number; off: boolean} | null;

/** What the duty loop needs of the slot clock (tests drive one by hand). */
export type DutyClock = Pick<SlotClock, "currentSlot" | "start" | "runAt">;

/** Runs each slot's duties at their deadlines; every task's failure is logged, none escapes. */
export class DutyLoop {
  private readonly ctx: ValidatorContext;
  private readonly config: BeaconConfig;
  private readonly clock: DutyClock;
  private readonly settings: ProposerSettings;
  private readonly doppelganger: DoppelgangerProtection | undefined;
  /** the settings' version last announced with prepareBeaconProposer (and in builder registrations) */
  private announced = -1;
  /** the key set's version last prepared for */
  private keysVersion = -1;
  private readonly registrations: BuilderRegistrations | null;
  private readonly proposer: ProposerService;
  private readonly attester: AttesterService;
  private readonly sync: SyncCommitteeService;
  private readonly heads: HeadWatch;
  private readonly inFlight = new Set<Promise<void>>();
  private lastEpoch: number | null = null;
  private readonly clockCheck: ClockCheck;
  /** the offset the duties were last skipped for, null while they run */
  private skippingFor: number | null = null;

  /** tasks run at each epoch start before the keys are resolved (the remote signer's keys are asked for) */
  readonly beforeEpoch: (() => Promise<unknown>)[] = [];

  constructor(ctx: ValidatorContext, clock: DutyClock, settings: ProposerSettings, doppelganger?: DoppelgangerProtection, builder?: BuilderModeOptions, clockCheck?: ClockCheck) {
    this.ctx = ctx;
    this.clockCheck = clockCheck ?? (() => null);
    this.doppelganger = doppelganger;
    this.config = ctx.config;
    this.clock = clock;
    this.settings = settings;
    this.registrations = builder
      ? new BuilderRegistrations({
          feeRecipientOf: (pubkey) => fromHex(settings.feeRecipientOf(pubkey) ?? ZERO_ADDRESS),
          gasLimitOf: (pubkey) => Number(settings.gasLimitOf(pubkey)),
        })
      : null;
    this.proposer = new ProposerService(ctx, (pubkey) => settings.graffitiBytesOf(toHex(pubkey)), builder);
    this.attester = new AttesterService(ctx, () => clock.currentSlot());
    this.sync = new SyncCommitteeService(ctx);
    this.heads = new HeadWatch(ctx.api, ctx.log, (event) => this.onHead(event), () => new Promise((resolve) => clock.runAt(clock.currentSlot() + 1, 0, resolve)));
  }

  /** Resolves the keys' indices, prepares the current epoch in the background, then follows the clock. */
  async start(): Promise<void> {
    const slot = Math.max(0, this.clock.currentSlot());
    const epoch = computeEpochAtSlot(slot);
    await this.resolveKeys(epoch);
    this.lastEpoch = epoch;
    this.run("epoch preparation", slot, () => this.onEpoch(epoch));
    this.heads.start();
    this.clock.start((s) => this.onSlot(s));
  }

  /** Stops following the node's head events (the clock is stopped by its owner). */
  stop(): void {
    this.heads.stop();
  }

  /** Waits for the tasks in flight, at most `timeoutMs`. */
  async settle(timeoutMs: number): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    await Promise.race([Promise.allSettled(this.inFlight), timeout]);
    clearTimeout(timer);
  }

  /**
   * A beacon node answers (or is synced) again: it may lack what was sent while it was not, so
   * the subnet subscriptions (with the duties), fee recipients and registrations are sent again.
   */
  nodeRecovered(): void {
    this.ctx.validators.refetchDuties();
    this.announced = -1;
  }

  private onSlot(slot: number): void {
    const epoch = computeEpochAtSlot(slot);
    const fork = this.config.getForkName(slot);
    if (this.lastEpoch === null || epoch > this.lastEpoch) {
      this.lastEpoch = epoch;
      this.run("epoch preparation", slot, () => this.onEpoch(epoch));
    } else if (this.announced !== this.settings.version || this.keysVersion !== this.ctx.validators.version) {
      // keys or fee recipients changed through the keymanager API: from this slot on, not the next epoch
      this.run("key changes", slot, () => this.onKeysChanged(epoch));
    } else {
      // fetched again only if they were fetched for other keys (a key released, resolved late) or not at all
      this.run("sync committee duties", slot, () => this.sync.pollChanged(epoch));
    }
    this.signing(slot, "block proposal", () => this.proposer.onSlotStart(slot));
    this.run("attester duties", slot, () => this.attester.pollDuties(epoch, !this.heads.live));
    this.at(slot, this.config.getAttestationDueMs(fork), "attestation", () => this.attester.attest(slot));
    this.at(slot, this.config.SLOT_DURATION_MS / 2, "selection proofs", () => this.attester.signSelectionProofs(slot + SELECTION_PROOF_LOOKAHEAD_SLOTS));
    this.at(slot, this.config.getAggregateDueMs(fork), "aggregation", () => this.attester.aggregate(slot));
    // no seats before altair: nothing is signed
    this.at(slot, this.config.SLOT_DURATION_MS / 2, "sync selection proofs", () => this.sync.signSelectionProofs(slot + SYNC_SELECTION_PROOF_LOOKAHEAD_SLOTS));
    if (this.config.getForkSeq(slot) >= ForkSeq.altair) {
      this.at(slot, this.config.getSyncMessageDueMs(fork), "sync committee messages", () => this.sync.produceMessages(slot));
      this.at(slot, this.config.getSyncContributionDueMs(fork), "sync committee contributions", () => this.sync.produceContributions(slot));
    }
  }

  /**
   * A new head: attester duties kept with another dependent root than the head's (a re-org
   * changed the shuffling they came from) are fetched again at once, not only at the next epoch.
   * Proposer duties are fetched at every slot start already.
   */
  private onHead(event: HeadEvent): void {
    const epoch = computeEpochAtSlot(event.slot);
    this.run("attester duties after a head change", event.slot, () =>
      this.attester.onHead(epoch, toHex(event.previousDutyDependentRoot), toHex(event.currentDutyDependentRoot))
    );
  }

  /**
   * Runs a duty that signs for `slot`, unless the clock is known to be off from the network's
   * by more than the spec tolerates: the slot it reads is then not the network's, and whatever
   * is signed would be early or late (peers ignore it). Said once when skipping starts and once
   * when it ends.
   */
  private signing(slot: number, what: string, task: () => Promise<void>): void {
    const check = this.clockCheck();
    if (check?.off) {
      if (this.skippingFor === null) {
        this.ctx.log.warn(
          {slot, offsetMs: check.offsetMs, toleranceMs: this.config.MAXIMUM_GOSSIP_CLOCK_DISPARITY},
          "Validator duties skipped: the beacon node's clock is off from the network's by more than the spec tolerates; they resume once it is right"
        );
      }
      this.skippingFor = check.offsetMs;
      this.ctx.log.debug({slot, offsetMs: check.offsetMs}, `${what} skipped: the clock is off`);
      return;
    }
    if (this.skippingFor !== null) {
      this.ctx.log.info({slot, offsetMs: check?.offsetMs}, "Validator duties resume: the clock agrees with the network's");
      this.skippingFor = null;
    }
    this.run(what, slot, task);
  }

  /** Once per epoch: resolve keys still unknown, doppelganger checks, sync committee duties, fee recipients. */
  private async onEpoch(epoch: number): Promise<void> {
    for (const task of this.beforeEpoch) await task();
    await this.resolveKeys(epoch);
    await this.doppelganger?.onEpoch(epoch);
    await Promise.all([this.sync.pollDuties(epoch), this.announceFeeRecipients(), this.register(epoch)]);
  }

  /**
   * Keys added (resolved now, their duties fetched for the new key set at once) or fee
   * recipients changed since the last announcement. The slot's own poll may have begun before
   * the resolution: what it brings is for the old keys, and is fetched again (dutyStore.ts).
   */
  private async onKeysChanged(epoch: number): Promise<void> {
    await this.resolveKeys(epoch);
    await Promise.all([this.announceFeeRecipients(), this.register(epoch), this.attester.pollDuties(epoch), this.sync.pollChanged(epoch)]);
  }

  /** Builder mode: each key's registration to the node, for its relay (signed again only when a preference changed). */
  private async register(epoch: number): Promise<void> {
    await this.registrations?.submit(this.ctx).catch((err: unknown) => this.ctx.log.error({epoch, error: errorMessage(err)}, "Builder registrations not sent"));
  }

  /** prepareBeaconProposer with each key's fee recipient (keys without one, and no default, are left to the node's). */
  private async announceFeeRecipients(): Promise<void> {
    const version = this.settings.version;
    const registrations = this.ctx.validators
      .entries()
      .map(([pubkey, validatorIndex]) => ({validatorIndex, feeRecipient: this.settings.feeRecipientOf(pubkey)}))
      .filter((r): r is {validatorIndex: number; feeRecipient: string} => r.feeRecipient !== undefined)
      .map((r) => ({validatorIndex: r.validatorIndex, feeRecipient: fromHex(r.feeRecipient)}));
    if (registrations.length > 0) await this.ctx.api.prepareBeaconProposer(registrations);
    this.announced = version;
  }

  /** Asks the beacon node for the indices of keys not resolved yet; failures are logged. */
  private async resolveKeys(epoch: number): Promise<void> {
    const {api, validators, log} = this.ctx;
    this.keysVersion = validators.version;
    if (validators.allResolved) return;
    try {
      await validators.resolve(api);
      if (!validators.allResolved) log.warn({epoch, known: validators.indices.length}, "Some validator keys are unknown to the beacon node");
    } catch (err) {
      log.error({epoch, error: errorMessage(err)}, "Failed to resolve validator indices");
    }
  }

  private at(slot: number, offsetMs: number, what: string, task: () => Promise<void>): void {
    this.clock.runAt(slot, offsetMs, () => this.signing(slot, what, task));
  }

  private run(what: string, slot: number, task: () => Promise<void>): void {
    const running = (async () => {
      try {
        await task();
      } catch (err) {
        // a syncing node answers 503 (the spec's rule): the validators wait for it, which is no error
        if (err instanceof ApiClientError && err.status === 503) this.ctx.log.info({slot, reason: errorMessage(err)}, `${what} waits: the beacon node is syncing`);
        else this.ctx.log.error({slot, error: errorMessage(err)}, `${what} failed`);
      }
    })();
    this.inFlight.add(running);
    void running.finally(() => this.inFlight.delete(running));
  }
}

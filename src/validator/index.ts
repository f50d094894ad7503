import {mkdir} from "node:fs/promises";
import {join} from "node:path";
import type {BeaconConfig} from "@lodestar/config";
import {ForkSeq} from "@lodestar/params";
import {computeEpochAtSlot} from "@lodestar/state-transition";
import {ApiClientError, type ApiClient} from "../api/client.ts";
import {getLogger} from "../log.ts";
import {AttesterService} from "./attester.ts";
import type {ValidatorBeaconApi} from "./beaconApi.ts";
import {SlotClock} from "./clock.ts";
import {errorMessage, type ValidatorContext} from "./context.ts";
import {readNodeChain} from "./nodeChain.ts";
import {ProposerService} from "./proposer.ts";
import {RouteFallbacks} from "./routeFallback.ts";
import {ValidatorSigner} from "./signer.ts";
import {SlashingProtection} from "./slashingProtection.ts";
import {SyncCommitteeService} from "./syncCommittee.ts";
import {ValidatorIndices} from "./validators.ts";
import {BuilderRegistrations} from "./builderMode.ts";
import type {LoopTurns} from "../loopTurns.ts";

export interface ValidatorClientOptions {
  api: ValidatorBeaconApi;
  /** The route-table client of the same beacon node: given, routes the node lacks fall back to older ones (routeFallback.ts). */
  fallbackClient?: ApiClient;
  /** Interop (mock-genesis) key indices of the validators to run. */
  indices: number[];
  /** Data directory; slashing protection lives in its `slashing-protection` LevelDB. */
  dataDir: string;
  /** Graffiti for each block, asked at proposal time. */
  graffiti?: () => Uint8Array | undefined;
  /** Fee recipient announced with prepareBeaconProposer once per epoch (nothing is announced without one). */
  feeRecipient?: Uint8Array;
  /** builder mode (builderMode.ts): registrations each epoch, blinded blocks when the node answers one */
  builder?: {gasLimit: number; boostFactor?: bigint};
  /** with --metrics: duties performed and missed */
  duties?: ValidatorContext["duties"];
  /** the event loop's turns of CPU-bound work, shared with the node it runs in (a standalone client has its own) */
  turns?: LoopTurns;
}

export interface ValidatorClient {
  /** Stops the clock, lets duties in flight settle (at most one slot) and closes the slashing protection store. */
  stop(): Promise<void>;
}

/**
 * Starts the validator client over the Beacon API: reads genesis and spec, opens slashing
 * protection, resolves the keys' indices and runs the duties of every slot from the next
 * slot start on. Throws only if genesis, spec or the slashing protection store are unusable,
 * or signing for the node's chain is not safe (nodeChain.ts).
 */
export async function startValidatorClient(opts: ValidatorClientOptions): Promise<ValidatorClient> {
  // Looked up here, not at import, so the directive the CLI installs at startup applies.
  const log = getLogger("validator");
  const {config, genesisTime} = await readNodeChain(opts.api, log);
  const api = opts.fallbackClient ? new RouteFallbacks(opts.fallbackClient, log).wrap(opts.api, config) : opts.api;
  const protectionDir = join(opts.dataDir, "slashing-protection");
  await mkdir(protectionDir, {recursive: true});
  const protection = await SlashingProtection.open(protectionDir);
  try {
    await protection.bindToChain(config.genesisValidatorsRoot);
    await protection.pruneAttestations();
  } catch (err) {
    await protection.close();
    throw err;
  }
  const signer = ValidatorSigner.fromInteropIndices(config, opts.indices, protection, opts.turns);
  const ctx: ValidatorContext = {api, config, signer, validators: new ValidatorIndices(signer.pubkeys), log, duties: opts.duties};
  const clock = new SlotClock(genesisTime, config.SLOT_DURATION_MS);
  const loop = new DutyLoop(ctx, clock, opts);

  log.info({validators: opts.indices.length, genesisTime, slotDurationMs: config.SLOT_DURATION_MS}, "Validator client started");
  await loop.start();
  return {
    async stop() {
      clock.stop();
      await loop.settle(config.SLOT_DURATION_MS);
      await protection.close();
      log.info("Validator client stopped");
    },
  };
}

/** Runs each slot's duties at their deadlines; every task's failure is logged, none escapes. */
class DutyLoop {
  private readonly ctx: ValidatorContext;
  private readonly config: BeaconConfig;
  private readonly clock: SlotClock;
  private readonly feeRecipient: Uint8Array | undefined;
  private readonly registrations: BuilderRegistrations | null;
  private readonly proposer: ProposerService;
  private readonly attester: AttesterService;
  private readonly sync: SyncCommitteeService;
  private readonly inFlight = new Set<Promise<void>>();
  private lastEpoch: number | null = null;

  constructor(ctx: ValidatorContext, clock: SlotClock, opts: ValidatorClientOptions) {
    this.ctx = ctx;
    this.config = ctx.config;
    this.clock = clock;
    this.feeRecipient = opts.feeRecipient;
    const builder = opts.builder ? {...opts.builder, feeRecipient: opts.feeRecipient ?? new Uint8Array(20)} : undefined;
    this.registrations = builder ? new BuilderRegistrations(builder) : null;
    this.proposer = new ProposerService(ctx, opts.graffiti, builder);
    this.attester = new AttesterService(ctx);
    this.sync = new SyncCommitteeService(ctx);
  }

  /** Resolves the keys' indices, prepares the current epoch in the background, then follows the clock. */
  async start(): Promise<void> {
    const slot = Math.max(0, this.clock.currentSlot());
    const epoch = computeEpochAtSlot(slot);
    await this.resolveKeys(epoch);
    this.lastEpoch = epoch;
    this.run("epoch preparation", slot, () => this.onEpoch(epoch));
    this.clock.start((s) => this.onSlot(s));
  }

  /** Waits for the tasks in flight, at most `timeoutMs`. */
  async settle(timeoutMs: number): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    await Promise.race([Promise.allSettled(this.inFlight), timeout]);
    clearTimeout(timer);
  }

  private onSlot(slot: number): void {
    const epoch = computeEpochAtSlot(slot);
    const fork = this.config.getForkName(slot);
    if (this.lastEpoch === null || epoch > this.lastEpoch) {
      this.lastEpoch = epoch;
      this.run("epoch preparation", slot, () => this.onEpoch(epoch));
    }
    this.run("block proposal", slot, () => this.proposer.onSlotStart(slot));
    this.run("attester duties", slot, () => this.attester.pollDuties(epoch));
    this.at(slot, this.config.getAttestationDueMs(fork), "attestation", () => this.attester.attest(slot));
    this.at(slot, this.config.getAggregateDueMs(fork), "aggregation", () => this.attester.aggregate(slot));
    if (this.config.getForkSeq(slot) >= ForkSeq.altair) {
      this.at(slot, this.config.getSyncMessageDueMs(fork), "sync committee messages", () => this.sync.produceMessages(slot));
      this.at(slot, this.config.getSyncContributionDueMs(fork), "sync committee contributions", () => this.sync.produceContributions(slot));
    }
  }

  /** Once per epoch: resolve keys still unknown, sync committee duties, fee recipients. */
  private async onEpoch(epoch: number): Promise<void> {
    const {api, validators} = this.ctx;
    await this.resolveKeys(epoch);
    const tasks: Promise<void>[] = [this.sync.pollDuties(epoch)];
    if (this.registrations) {
      tasks.push(this.registrations.submit(this.ctx).catch((err: unknown) => this.ctx.log.error({epoch, error: errorMessage(err)}, "Builder registrations not sent")));
    }
    if (this.feeRecipient && validators.indices.length > 0) {
      const feeRecipient = this.feeRecipient;
      tasks.push(api.prepareBeaconProposer(validators.indices.map((validatorIndex) => ({validatorIndex, feeRecipient}))));
    }
    await Promise.all(tasks);
  }

  /** Asks the beacon node for the indices of keys not resolved yet; failures are logged. */
  private async resolveKeys(epoch: number): Promise<void> {
    const {api, validators, log} = this.ctx;
    if (validators.allResolved) return;
    try {
      if ((await validators.resolve(api)) > 0) this.attester.invalidate();
      if (!validators.allResolved) log.warn({epoch, known: validators.indices.length}, "Some validator keys are unknown to the beacon node");
    } catch (err) {
      log.error({epoch, error: errorMessage(err)}, "Failed to resolve validator indices");
    }
  }

  private at(slot: number, offsetMs: number, what: string, task: () => Promise<void>): void {
    this.clock.runAt(slot, offsetMs, () => this.run(what, slot, task));
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

import {mkdir} from "node:fs/promises";
import {join} from "node:path";
import type {BeaconConfig} from "@lodestar/config";
import {ForkSeq} from "@lodestar/params";
import {computeEpochAtSlot} from "@lodestar/state-transition";
import {fromHex, toHex} from "@lodestar/utils";
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
import {BuilderRegistrations, type BuilderModeOptions} from "./builderMode.ts";
import type {LoopTurns} from "../loopTurns.ts";
import {type KeySourceOptions, loadStartupKeys} from "./keys/loadKeys.ts";
import {DEFAULT_GAS_LIMIT, ProposerSettings} from "./keys/proposerSettings.ts";
import {ValidatorKeys} from "./keys/validatorKeys.ts";
import {DoppelgangerProtection} from "./doppelganger.ts";
import {type KeymanagerOptions, type KeymanagerServer, startKeymanagerServer} from "./keymanager/server.ts";
import {RemoteSignerClient} from "./remote/client.ts";
import {RemoteSignerKeys} from "./remote/signerKeys.ts";
import {readRemoteKeys} from "./keys/remoteKeys.ts";

const ZERO_ADDRESS = "0x" + "00".repeat(20);

export interface ValidatorClientOptions {
  api: ValidatorBeaconApi;
  /** The route-table client of the same beacon node: given, routes the node lacks fall back to older ones (routeFallback.ts). */
  fallbackClient?: ApiClient;
  /** Interop (mock-genesis) key indices of the validators to run. */
  indices: number[];
  /** Keystores to run (besides those imported through the keymanager API, always loaded from the data dir). */
  keystores?: Omit<KeySourceOptions, "interopIndices">;
  /** Keys perform duties only after two full epochs in which the beacon node saw them idle (doppelganger.ts). */
  doppelgangerProtection?: boolean;
  /** A remote signer (Web3Signer ETH2 API) whose keys are signed with (`url`), and how long each of its answers may take (every remote key's). */
  remoteSigner?: {url?: string; timeoutMs?: number};
  /** Serve the keymanager API. */
  keymanager?: KeymanagerOptions;
  /** Data directory; slashing protection lives in its `slashing-protection` LevelDB. */
  dataDir: string;
  /** Graffiti (text or 0x hex) of each block whose key has none of its own; none: the beacon node's. */
  graffiti?: string;
  /** Fee recipient announced with prepareBeaconProposer once per epoch for keys without their own (nothing is announced for them without one). */
  feeRecipient?: Uint8Array;
  /** builder mode (builderMode.ts): registrations each epoch (with this gas limit for keys without their own), blinded blocks when the node answers one */
  builder?: {gasLimit?: number; boostFactor?: bigint};
  /** with --metrics: duties performed and missed */
  duties?: ValidatorContext["duties"];
  /** the event loop's turns of CPU-bound work, shared with the node it runs in (a standalone client has its own) */
  turns?: LoopTurns;
}

export interface ValidatorClient {
  /** the keymanager API's port, when it is served */
  keymanagerPort: number | null;
  /** Resolves with the reason if the client stops signing on its own (a doppelganger was found); `stop` still closes it. */
  halted: Promise<string>;
  /** Stops the clock, lets duties in flight settle (at most one slot), closes the slashing protection store and releases the keystore locks. */
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
  let startup;
  let remoteKeys;
  let settings;
  try {
    settings = ProposerSettings.open(join(opts.dataDir, "proposer-settings.json"), {
      feeRecipient: opts.feeRecipient ? toHex(opts.feeRecipient) : undefined,
      gasLimit: opts.builder?.gasLimit !== undefined ? String(opts.builder.gasLimit) : DEFAULT_GAS_LIMIT,
      graffiti: opts.graffiti,
    });
    remoteKeys = readRemoteKeys(opts.dataDir);
    startup = await loadStartupKeys({interopIndices: opts.indices, ...opts.keystores}, opts.dataDir, log);
  } catch (err) {
    await protection.close();
    throw err;
  }
  const signer = new ValidatorSigner(config, [], protection, opts.turns);
  const ctx: ValidatorContext = {api, config, signer, validators: new ValidatorIndices([]), log, duties: opts.duties};
  const clock = new SlotClock(genesisTime, config.SLOT_DURATION_MS);
  let halt!: (reason: string) => void;
  const halted = new Promise<string>((resolve) => (halt = resolve));
  const doppelganger = opts.doppelgangerProtection
    ? new DoppelgangerProtection(
        api,
        ctx.validators,
        log,
        ({index, epoch}) => {
          clock.stop();
          halt(`doppelganger protection: validator ${index} was live in epoch ${epoch}, signed by another client`);
        },
        () => loop.keysReleased()
      )
    : undefined;
  const currentEpoch = (): number => computeEpochAtSlot(Math.max(0, clock.currentSlot()));
  const remoteClients = new Map<string, RemoteSignerClient>();
  const remoteSigner = (url: string): RemoteSignerClient => {
    const client = new RemoteSignerClient(url, opts.remoteSigner?.timeoutMs, log);
    const known = remoteClients.get(client.url);
    if (known) return known;
    remoteClients.set(client.url, client);
    return client;
  };
  const keys = new ValidatorKeys({
    signer,
    validators: ctx.validators,
    protection,
    settings,
    dataDir: opts.dataDir,
    log,
    doppelganger: doppelganger && {register: (pubkey) => doppelganger.register(pubkey, currentEpoch()), forget: (pubkey) => doppelganger.forget(pubkey)},
    remoteSigner,
  });
  for (const key of startup.interop) keys.add(key, key.secretKey);
  for (const keystore of startup.keystores) keys.add({pubkey: keystore.pubkey, keystore});
  for (const {pubkey, url} of remoteKeys) {
    if (keys.has(pubkey)) log.warn({pubkey, url}, "Remote key imported earlier is also a local key: the local key signs");
    else keys.addRemote(pubkey, url, false);
  }
  const signerKeys = opts.remoteSigner?.url !== undefined ? new RemoteSignerKeys(remoteSigner(opts.remoteSigner.url), keys, log) : undefined;
  await signerKeys?.refresh();
  const loop = new DutyLoop(ctx, clock, settings, doppelganger, opts.builder, signerKeys);

  let keymanager: KeymanagerServer | null = null;
  try {
    if (opts.keymanager) keymanager = await startKeymanagerServer(opts.keymanager, {keys, settings, signer, validators: ctx.validators, api, config, clock, dataDir: opts.dataDir, log});
  } catch (err) {
    keys.releaseLocks();
    await protection.close();
    throw err;
  }
  log.info(
    {validators: keys.size, interop: startup.interop.length, keystores: startup.keystores.length, remote: keys.listRemote().length, doppelgangerWaiting: doppelganger?.waiting ?? 0, genesisTime, slotDurationMs: config.SLOT_DURATION_MS},
    "Validator client started"
  );
  await loop.start();
  return {
    keymanagerPort: keymanager?.port ?? null,
    halted,
    async stop() {
      clock.stop();
      await keymanager?.close();
      await loop.settle(config.SLOT_DURATION_MS);
      await protection.close();
      keys.releaseLocks();
      for (const remote of remoteClients.values()) remote.close();
      log.info("Validator client stopped");
    },
  };
}

/** Runs each slot's duties at their deadlines; every task's failure is logged, none escapes. */
class DutyLoop {
  private readonly ctx: ValidatorContext;
  private readonly config: BeaconConfig;
  private readonly clock: SlotClock;
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
  private readonly inFlight = new Set<Promise<void>>();
  private lastEpoch: number | null = null;
  private readonly signerKeys: RemoteSignerKeys | undefined;

  constructor(ctx: ValidatorContext, clock: SlotClock, settings: ProposerSettings, doppelganger?: DoppelgangerProtection, builder?: BuilderModeOptions, signerKeys?: RemoteSignerKeys) {
    this.ctx = ctx;
    this.signerKeys = signerKeys;
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
    } else if (this.announced !== this.settings.version || this.keysVersion !== this.ctx.validators.version) {
      // keys or fee recipients changed through the keymanager API: from this slot on, not the next epoch
      this.run("key changes", slot, () => this.onKeysChanged(epoch));
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

  /** Keys held by doppelganger protection were released: their attester duties are fetched again. */
  keysReleased(): void {
    this.attester.invalidate();
  }

  /** Once per epoch: resolve keys still unknown, doppelganger checks, sync committee duties, fee recipients. */
  private async onEpoch(epoch: number): Promise<void> {
    await this.signerKeys?.refresh();
    await this.resolveKeys(epoch);
    await this.doppelganger?.onEpoch(epoch);
    await Promise.all([this.sync.pollDuties(epoch), this.announceFeeRecipients(), this.register(epoch)]);
  }

  /** Keys added (resolved now, their duties fetched) or fee recipients changed since the last announcement. */
  private async onKeysChanged(epoch: number): Promise<void> {
    const before = this.ctx.validators.indices.length;
    await this.resolveKeys(epoch);
    const tasks = [this.announceFeeRecipients(), this.register(epoch)];
    if (this.ctx.validators.indices.length !== before) tasks.push(this.sync.pollDuties(epoch));
    await Promise.all(tasks);
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

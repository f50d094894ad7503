import {mkdir} from "node:fs/promises";
import {join} from "node:path";
import {computeEpochAtSlot} from "@lodestar/state-transition";
import {toHex} from "@lodestar/utils";
import {getLogger} from "../log.ts";
import type {ValidatorBeaconApi} from "./beaconApi.ts";
import {SlotClock} from "./clock.ts";
import type {ValidatorContext} from "./context.ts";
import {readNodeChain} from "./nodeChain.ts";
import {BeaconNodes, type BeaconNodeEndpoint} from "./beaconNodes.ts";
import type {BeaconNodeMetrics} from "../metrics/validatorMetrics.ts";
import {ValidatorSigner} from "./signer.ts";
import {SlashingProtection} from "./slashingProtection.ts";
import {ValidatorIndices} from "./validators.ts";
import type {LoopTurns} from "../loopTurns.ts";
import {type KeySourceOptions, loadStartupKeys} from "./keys/loadKeys.ts";
import {DEFAULT_GAS_LIMIT, ProposerSettings} from "./keys/proposerSettings.ts";
import {ValidatorKeys} from "./keys/validatorKeys.ts";
import {DoppelgangerProtection} from "./doppelganger.ts";
import {type ClockCheck, DutyLoop} from "./dutyLoop.ts";
import {type KeymanagerOptions, type KeymanagerServer, startKeymanagerServer} from "./keymanager/server.ts";
import {RemoteSignerClient} from "./remote/client.ts";
import {RemoteSignerKeys} from "./remote/signerKeys.ts";
import {readRemoteKeys} from "./keys/remoteKeys.ts";

export interface ValidatorClientOptions {
  /** The beacon node in the same process (the node's own validators), or for tests; without `beaconNodes`. */
  api?: ValidatorBeaconApi;
  /**
   * Beacon nodes by their route-table clients, in order of preference (beaconNodes.ts): health
   * checks, failover, publications to all; each falls back to older routes it lacks (routeFallback.ts).
   */
  beaconNodes?: {endpoints: BeaconNodeEndpoint[]; metrics?: BeaconNodeMetrics};
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
  /** the wall clock, in ms (the node's own, which tests may shift) */
  now?: () => number;
  /** what the beacon node measured of its clock against the network's: while `off`, nothing is signed */
  clockCheck?: ClockCheck;
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
  const nodes = opts.beaconNodes ? new BeaconNodes(opts.beaconNodes.endpoints, log, opts.beaconNodes.metrics) : null;
  const api = nodes?.api ?? opts.api;
  if (!api) throw new Error("startValidatorClient: no beacon node given");
  const {config, genesisTime} = await readNodeChain(api, log);
  const clock = new SlotClock(genesisTime, config.SLOT_DURATION_MS, opts.now);
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
        }
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
  const loop = new DutyLoop(ctx, clock, settings, doppelganger, opts.builder, opts.clockCheck);
  // the keys of --remote-signer: asked for again at each epoch start
  if (signerKeys) loop.beforeEpoch.push(() => signerKeys.refresh());
  nodes?.onRecovered(() => loop.nodeRecovered());

  let keymanager: KeymanagerServer | null = null;
  try {
    if (opts.keymanager) keymanager = await startKeymanagerServer(opts.keymanager, {keys, settings, signer, validators: ctx.validators, api, config, clock, dataDir: opts.dataDir, log});
  } catch (err) {
    keys.releaseLocks();
    await protection.close();
    throw err;
  }
  // the nodes' health, checked now and then each slot on the clock (stopped with it), before the first duty
  await nodes?.start(config, clock);
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
      loop.stop();
      await keymanager?.close();
      await loop.settle(config.SLOT_DURATION_MS);
      await protection.close();
      keys.releaseLocks();
      for (const remote of remoteClients.values()) remote.close();
      log.info("Validator client stopped");
    },
  };
}

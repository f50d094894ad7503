import {SLOTS_PER_EPOCH} from "@lodestar/params";
import {computeEpochAtSlot} from "@lodestar/state-transition";
import {join} from "node:path";
import {mkdirSync} from "node:fs";
import {Clock} from "./clock/clock.ts";
import {devChainConfig} from "./config/chainConfig.ts";
import {checkNetworkAnchor, customNetwork, publicNetwork} from "./config/networks.ts";
import {bootnodesOf} from "./config/bootnodes.ts";
import {BeaconDb} from "./db/beaconDb.ts";
import {MockExecutionEngine} from "./execution/mockEngine.ts";
import {HttpExecutionEngine} from "./execution/httpEngine.ts";
import {loadOrCreateJwtSecret} from "./execution/jwt.ts";
import {BuilderService} from "./builder/service.ts";
import {DEFAULT_CIRCUIT_BREAKER} from "./builder/circuitBreaker.ts";
import {observeBuilder} from "./builder/metrics.ts";
import {fromHex} from "@lodestar/utils";
import {initChain} from "./chain/init.ts";
import {BlsWorkerPool} from "./bls/workerPool.ts";
import {loadKzg} from "./kzg/kzg.ts";
import type {BeaconChain} from "./chain/beaconChain.ts";
import {getLogger, initLogging} from "./log.ts";
import type {NodeOptions} from "./cli/options.ts";
import {graffitiFromText} from "./graffiti.ts";
import {NodeSettings} from "./nodeSettings.ts";
import {NodeIdentity, loadOrCreateNodeKey} from "./network/identity.ts";
import {startNetwork} from "./network/index.ts";
import {readGenesisStateFile, readStateBytesHeader} from "./chain/genesis.ts";
import {fetchCheckpointAnchor} from "./sync/checkpointSync.ts";
import {applyRequestLimits, inProcessTransport, startRestServer} from "./api/server/index.ts";
import {createApiClient, type Transport} from "./api/client.ts";
import {createValidatorBeaconApi} from "./api/validatorApi.ts";
import {startValidatorClient} from "./validator/index.ts";
import {keyAndKeymanagerOptions} from "./validator/standalone.ts";
import type {ApiContext} from "./api/impl/context.ts";
import {RUNNING_BUILD} from "./projectRoot.ts";
import {VERSION} from "./version.ts";
import type {Registry} from "prom-client";
import {createNodeMetrics} from "./metrics/nodeMetrics.ts";
import {observeChain} from "./metrics/chainMetrics.ts";
import {startMetricsServer} from "./metrics/server.ts";
import {LoopTurns} from "./loopTurns.ts";
import {hasherName} from "./hasher.ts";

/**
 * For tests of a wrong clock: `BEACON_GATEWAY_CLOCK_OFFSET_MS=<ms>` shifts the node's clock (its
 * slots, and its validators') by that much from the system's. Unset, the system clock.
 */
function testClockOffsetMs(): number {
  const text = process.env.BEACON_GATEWAY_CLOCK_OFFSET_MS;
  if (text === undefined || text === "") return 0;
  const ms = Number(text);
  if (!Number.isInteger(ms)) throw new Error(`BEACON_GATEWAY_CLOCK_OFFSET_MS must be a whole number of milliseconds, got ${JSON.stringify(text)}`);
  return ms;
}

/** How soon after the first start the dev genesis happens, so the node is ready for slot 1. */
const GENESIS_DELAY_SECONDS = 3;

export interface RunningNode {
  chain: BeaconChain;
  restPort: number | null;
  /** the REST handlers without a socket (what the JSON-RPC layer calls in-process) */
  api: Transport;
  /** with --metrics: the registry other servers (the JSON-RPC layer) add their own metrics to */
  metricsRegistry: Registry | null;
  stop(): Promise<void>;
}

/** The composition root: builds and starts the modules in order, and stops them in reverse. */
export async function startNode(opts: NodeOptions): Promise<RunningNode> {
  initLogging({directive: opts.logLevel, format: opts.logFormat});
  const log = getLogger("node");
  log.info({version: VERSION, network: opts.network, preset: opts.preset, dataDir: opts.dataDir, code: RUNNING_BUILD ? "dist" : "src", hasher: hasherName()}, "starting beacon-gateway");
  mkdirSync(opts.dataDir, {recursive: true});
  const metrics = opts.metrics ? createNodeMetrics() : undefined;
  const clockOffsetMs = testClockOffsetMs();
  const now = clockOffsetMs === 0 ? Date.now : () => Date.now() + clockOffsetMs;
  if (clockOffsetMs !== 0) log.warn({clockOffsetMs}, "the node's clock is shifted from the system's (BEACON_GATEWAY_CLOCK_OFFSET_MS, for tests)");

  const chainNetwork = opts.network === "dev" ? null : opts.network === "custom" ? customNetwork(opts.networkConfig!) : publicNetwork(opts.network);
  const chainConfig = chainNetwork?.config ?? devChainConfig({secondsPerSlot: opts.secondsPerSlot, genesisFork: opts.genesisFork, forkEpochs: opts.forkEpochs});
  const db = await BeaconDb.open(join(opts.dataDir, "beacon"), chainConfig);
  const settings = await NodeSettings.load(db, opts.graffiti !== undefined ? graffitiFromText(opts.graffiti) : undefined);
  settings.setDefaultFeeRecipient(fromHex(opts.suggestedFeeRecipient));
  const httpEngine = opts.executionEndpoint
    ? new HttpExecutionEngine({url: opts.executionEndpoint, jwtSecret: loadOrCreateJwtSecret(opts.jwtSecret ?? join(opts.dataDir, "jwt.hex"))})
    : null;
  await httpEngine?.start();
  const engine = httpEngine ?? new MockExecutionEngine({blobsPerBlock: opts.devBlobsPerBlock});
  const builder = opts.builder
    ? new BuilderService(chainConfig, {
        url: opts.builder,
        headerTimeoutMs: opts.builderTimeout,
        boostFactor: opts.builderBoostFactor,
        circuitBreaker: {...DEFAULT_CIRCUIT_BREAKER, allowedFaults: opts.builderFaultSlots, faultWindow: opts.builderFaultWindow},
        registrationsFile: join(opts.dataDir, "builder", "registrations.json"),
      })
    : null;
  let clock: Clock | null = null;
  // the CPU-bound work done on the event loop, a few ms per turn: the dev validators' signing
  // and, without --bls-threads, signature checks (one after the other, never both in one turn)
  const loopTurns = new LoopTurns();
  // signatures are checked on worker threads (--bls-threads), or on the event loop a batch per turn
  const bls = new BlsWorkerPool(opts.blsThreads, loopTurns);
  // until the chain runs, a refused start (a checkpoint that is not the trusted one, another
  // network's state) releases what would hold the process open: BLS workers, the engine's probe, the database
  const release = async (e: unknown): Promise<never> => {
    await bls.close();
    httpEngine?.stop();
    await db.close();
    throw e;
  };
  const genesisState = opts.genesisStateFile !== undefined ? readGenesisStateFile(opts.genesisStateFile) : undefined;
  const hasChain = (await db.chainMeta.genesisTime.get()) !== null;
  const checkpoint = opts.checkpointSyncUrl !== undefined && !hasChain ? await fetchCheckpointAnchor(opts.checkpointSyncUrl, chainConfig, {wssCheckpoint: opts.wssCheckpoint}).catch(release) : undefined;
  if (opts.wssCheckpoint && hasChain) log.info({dataDir: opts.dataDir}, "--wss-checkpoint not checked: the data dir has a chain already, which the node resumes");
  // the KZG trusted setup takes a second or two to load: at start, not at the first blob (after the checkpoint: a refused one exits sooner)
  if (Number.isFinite(chainConfig.DENEB_FORK_EPOCH)) loadKzg();
  try {
    if (chainNetwork) checkNetworkAnchor(opts.network, chainNetwork, genesisState && readStateBytesHeader(genesisState), checkpoint, log);
  } catch (e) {
    await release(e);
  }
  const chain = await initChain(
    chainConfig,
    db,
    engine,
    (genesisTime) => (clock = new Clock(genesisTime, chainConfig.SECONDS_PER_SLOT, SLOTS_PER_EPOCH, now)),
    {
      validatorCount: opts.validators,
      genesisTime: opts.genesisTime ?? Math.floor(now() / 1000) + GENESIS_DELAY_SECONDS,
      requestedGenesisTime: opts.genesisTime,
      genesisState,
      checkpoint,
    },
    {graffiti: () => settings.graffiti, feeRecipientOf: (index) => settings.feeRecipientOf(index), blockImportTimes: metrics?.blockImport, builder, pruneSidecars: opts.pruneSidecars, stateCacheBytes: opts.stateCacheSize * 1024 * 1024, verifier: bls}
  ).catch(release);
  if (builder) {
    clock!.on("slot", () => builder.onSlot());
    clock!.on("epoch", () => builder.onEpoch());
    builder.start();
  }
  clock!.start();

  const networkDir = join(opts.dataDir, "network");
  const privateKey = await loadOrCreateNodeKey(networkDir);
  const identity = new NodeIdentity(privateKey, {config: chain.config, currentEpoch: () => computeEpochAtSlot(chain.currentSlot())}, networkDir);
  // the network's built-in bootnodes, and those of --bootnodes
  const network = await startNetwork({chain, pools: chain.pools, identity, privateKey, custodyStore: db.chainMeta.custodyGroupCount, metrics}, {...opts, bootnodes: bootnodesOf(opts.network, opts.bootnodes)});
  if (metrics && builder) observeBuilder(metrics.registry, builder);
  const stopObservingChain = metrics ? observeChain(metrics.registry, chain, () => network.api.peers().filter((p) => p.state === "connected").length) : null;

  const ctx: ApiContext = {
    chain,
    pools: chain.pools,
    node: {...settings.apiView(VERSION), identity, isSyncing: () => network.isSyncing(), isElOffline: () => httpEngine?.isOffline() ?? false},
    network: network.api,
    builder: builder ?? undefined,
  };
  // read by the REST server and the in-process transport of the node's own validators alike
  applyRequestLimits({maxQueryIds: opts.restMaxQueryIds, maxBodyIds: opts.restMaxBodyIds, maxEventStreams: opts.restMaxEventStreams, eventQueueBytes: opts.restEventQueue * 1024 * 1024});
  const rest = opts.rest
    ? await startRestServer(
        {
          port: opts.restPort,
          address: opts.restAddress,
          allowOrigin: opts.restAllowOrigin ?? undefined,
          metricsRegistry: metrics?.registry,
          bodyLimit: opts.restBodyLimit * 1024 * 1024,
          limits: {
            maxConnections: opts.restMaxConnections,
            headerTimeoutSeconds: opts.restHeaderTimeout,
            requestTimeoutSeconds: opts.restRequestTimeout,
            idleTimeoutSeconds: opts.restIdleTimeout,
          },
        },
        ctx
      )
    : null;

  // stops what started before the validators, when they cannot start (a keystore that cannot be used)
  const stopCore = async (): Promise<void> => {
    stopObservingChain?.();
    metrics?.close();
    await rest?.close();
    await network.stop();
    clock!.stop();
    await chain.close();
    await bls.close();
    httpEngine?.stop();
    await db.close();
  };
  const validator =
    opts.devValidators.length > 0 || opts.keystoresDir !== undefined || opts.remoteSigner !== undefined || opts.keymanager
      ? await startValidatorClient({
          api: createValidatorBeaconApi(createApiClient(inProcessTransport(ctx))),
          indices: opts.devValidators,
          ...keyAndKeymanagerOptions(opts),
          dataDir: join(opts.dataDir, "validator"),
          duties: metrics?.duties,
          turns: loopTurns,
          // with --builder the node's own validators register and take builder payloads too
          builder: builder ? {} : undefined,
          feeRecipient: fromHex(opts.suggestedFeeRecipient),
          now,
          // the node's clock against its peers': its validators sign nothing while it is off
          clockCheck: () => network.clockVerdict(),
        }).catch(async (err: unknown) => {
          await stopCore();
          throw err;
        })
      : null;

  // the node's own validators stop on a doppelganger (logged there); the node serves on
  void validator?.halted.then((reason) => log.error({reason}, "The node's validators stopped"));
  const metricsServer = metrics ? await startMetricsServer(metrics.registry, {port: opts.metricsPort, address: opts.metricsAddress}) : null;

  let stopping: Promise<void> | null = null;
  return {
    chain,
    restPort: rest?.port ?? null,
    api: inProcessTransport(ctx),
    metricsRegistry: metrics?.registry ?? null,
    stop() {
      stopping ??= (async () => {
        log.info("stopping");
        await validator?.stop();
        await metricsServer?.close();
        await stopCore();
        log.info("stopped");
      })();
      return stopping;
    },
  };
}

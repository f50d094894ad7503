import type {BeaconConfig} from "@lodestar/config";
import {computeEpochAtSlot, computeStartSlotAtEpoch} from "@lodestar/state-transition";
import {SLOTS_PER_EPOCH} from "@lodestar/params";
import type {BeaconChain} from "../chain/beaconChain.ts";
import type {NetworkContext} from "./networkContext.ts";
import {getLogger} from "../log.ts";
import type {OperationPools} from "../pools/index.ts";
import {updateTopicScores} from "./gossip/scoringParams.ts";
import {shouldJoinGossip} from "./gossipRouter.ts";
import type {NodeIdentity} from "./identity.ts";
import {PeerManager} from "./peers/peerManager.ts";
import {ReqResp} from "./reqresp/reqResp.ts";
import {StatusSource} from "./status.ts";
import {SubnetService} from "./subnets.ts";
import {startLightClientPublisher} from "./lightClientPublisher.ts";
import type {NetworkOptions} from "./options.ts";
import type {NodeMetrics} from "../metrics/nodeMetrics.ts";
import {createHost, startHost} from "./host.ts";
import {createSync} from "./syncService.ts";
import {createGossip} from "./gossipService.ts";
import {CustodyService, type CustodyStore} from "./custodyService.ts";
import {reqRespServing} from "./reqRespHandlers.ts";
import {startDiscovery} from "./discoveryService.ts";
import {networkApi} from "./networkApi.ts";
import {ClockWatch} from "./clockWatch.ts";
import type {ClockOffsetVerdict} from "../clock/offset.ts";

const log = getLogger("network");

export interface NetworkDeps {
  chain: BeaconChain;
  pools: OperationPools;
  identity: NodeIdentity;
  /** the node's secp256k1 key, 32 raw bytes */
  privateKey: Uint8Array;
  /** where the custody group count is kept across restarts */
  custodyStore: CustodyStore;
  metrics?: Pick<NodeMetrics, "gossipReceived" | "gossipPublished" | "gossipValidation" | "gossipOverloaded" | "reqResp" | "backfill" | "clockOffset">;
}

export interface RunningNetwork {
  /** what the REST API sees of the network */
  api: NetworkContext;
  /** whether the node is catching up with its peers (validator duties wait meanwhile) */
  isSyncing(): boolean;
  /** the node's clock against its peers' (from their gossip), null before there is an estimate */
  clockVerdict(): ClockOffsetVerdict | null;
  stop(): Promise<void>;
}

/**
 * The network's composition root: each part is built from the parts before it, then started
 * in order. The host (libp2p) and req/resp (our requests) come first; the peer manager makes
 * its requests through req/resp and answers with our status; the sync services and gossip use
 * the peer manager's peers; custody and subnets choose the topics gossip joins; req/resp serves
 * peers once the peer manager exists (it handles their handshakes); discovery starts once libp2p
 * listens, and the peer manager starts last, asking discovery for peers.
 */
export async function startNetwork(deps: NetworkDeps, opts: NetworkOptions): Promise<RunningNetwork> {
  const {chain, identity} = deps;
  const config: BeaconConfig = chain.config;
  const currentEpoch = (): number => computeEpochAtSlot(chain.currentSlot());

  const {libp2p, scores, topicScoreInput} = await createHost(chain, deps.privateKey, opts);
  const reqResp = new ReqResp({libp2p, config, currentEpoch, metrics: deps.metrics});
  const status = new StatusSource(chain);
  const subnets = new SubnetService({config, nodeId: identity.nodeId, currentSlot: () => chain.currentSlot(), subscribeAll: opts.subscribeAllSubnets});
  const peers = new PeerManager(
    {
      libp2p,
      requests: reqResp,
      scores,
      ourStatus: () => status.current(),
      currentSlot: () => chain.currentSlot(),
      metadataSeq: () => identity.metadata().seqNumber,
      checkpointRootAt: (epoch) => checkpointRootAt(chain, epoch),
      gossipScore: (peer) => libp2p.services.gossipsub.getScore(peer),
    },
    {targetPeers: opts.targetPeers, maxPeers: opts.maxPeers, directPeers: opts.directPeers}
  );
  const sync = await createSync({chain, reqResp, peers, backfillToGenesis: opts.backfillToGenesis, metrics: deps.metrics?.backfill});
  // status v2's earliest_available_slot: the lowest block backfill has reached
  status.followHistory(() => sync.backfill.earliestAvailableSlot());
  // the node's clock against its peers': their gossip blocks and attestations timed as they arrive
  const clockWatch = new ClockWatch({config, msIntoSlot: (slot) => chain.clock.msIntoSlot(slot), setOffsetSeconds: deps.metrics?.clockOffset.set.bind(deps.metrics.clockOffset)});
  peers.on("disconnected", (peer) => clockWatch.onPeerDisconnected(peer));
  const gossip = createGossip({libp2p, chain, pools: deps.pools, peers, unknownBlockSync: sync.unknownBlockSync, clockWatch, currentEpoch, aggregatesOn: (subnet, slot) => subnets.aggregatesOn(subnet, slot), metrics: deps.metrics});

  const custody = new CustodyService({
    config,
    chain,
    nodeId: BigInt("0x" + identity.nodeId.replace(/^0x/, "")),
    store: deps.custodyStore,
    apply: (count, columns) => {
      identity.setCustodyGroupCount(count);
      chain.dataAvailability.setSamplingColumns(columns);
      gossip.setDataColumnSubnets([...new Set(columns.map((c) => c % config.DATA_COLUMN_SIDECAR_SUBNET_COUNT))]);
    },
  });
  await custody.load(opts);
  subnets.onChange(({attnets, syncnets, enrAttnets, enrSyncnets}) => {
    gossip.setSubnets(attnets, syncnets);
    identity.setSubnets({attnets: enrAttnets, syncnets: enrSyncnets});
  });

  const updateGossipJoined = (joined: boolean): void =>
    gossip.setJoined(shouldJoinGossip(joined, chain.currentSlot() - chain.getHead().slot, sync.rangeSync.isSyncing()));
  // a node restarted far behind the head joins gossip once range sync has brought it there
  updateGossipJoined(false);
  sync.rangeSync.on("done", () => updateGossipJoined(gossip.isJoined()));

  await startHost(libp2p, opts);
  await reqResp.start(reqRespServing(chain, identity, peers));
  gossip.start();
  // the long-lived subnets now, not at the next slot: peers that connect at once ask for our
  // metadata, and Lodestar prunes peers that show no long-lived subnet
  subnets.onSlot(chain.currentSlot());
  const discovery = await startDiscovery({config, libp2p, identity, privateKey: deps.privateKey, peers, currentEpoch}, opts);
  // last, once discovery exists: the peer manager's first heartbeat dials and asks discovery for peers
  peers.start((count) => void discovery?.findPeers(count, {attnets: subnets.state().dutyAttnets}));
  sync.start();
  log.info({peerId: identity.peerId, addresses: identity.p2pAddresses(), enr: identity.enr()}, "network started");

  const onSlot = (slot: number): void => {
    clockWatch.onSlot(slot);
    subnets.onSlot(slot);
    updateGossipJoined(gossip.isJoined());
    sync.backfill.wake();
    if (slot % SLOTS_PER_EPOCH === 0) {
      custody.onEpoch();
      gossip.updateSubscriptions();
      try {
        updateTopicScores(libp2p.services.gossipsub.score, {config, ...topicScoreInput()});
      } catch (e) {
        log.warn({err: (e as Error).message}, "topic score parameters not updated");
      }
      identity.refresh(); // the ENR's fork entries at fork boundaries
    }
  };
  chain.clock.on("slot", onSlot);
  const stopLightClientPublisher = startLightClientPublisher({
    config,
    emitter: chain.emitter,
    clock: chain.clock,
    publish: (message) => void gossip.publish(message).catch((e: Error) => log.debug({type: message.type, err: e.message}, "publish failed")),
  });

  return {
    api: networkApi({libp2p, gossip, peers, scores, subnets, custody}),
    isSyncing: () => sync.rangeSync.isSyncing(),
    clockVerdict: () => clockWatch.verdict(),
    async stop() {
      chain.clock.off("slot", onSlot);
      stopLightClientPublisher();
      chain.dataAvailability.columnSources.setPublisher(null);
      await sync.stop();
      await discovery?.stop();
      await peers.stop();
      gossip.stop();
      await reqResp.stop();
      await libp2p.stop();
      log.info("network stopped");
    },
  };
}

/** The root of our canonical checkpoint at `epoch`: the last block at or before its first slot (null when not found nearby). */
async function checkpointRootAt(chain: BeaconChain, epoch: number): Promise<Uint8Array | null> {
  const start = computeStartSlotAtEpoch(epoch);
  for (let slot = start; slot >= Math.max(0, start - 2 * SLOTS_PER_EPOCH); slot--) {
    const root = await chain.getCanonicalBlockRootAtSlot(slot);
    if (root) return root;
  }
  return null;
}

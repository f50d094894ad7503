import {isIPv6} from "node:net";
import type {BeaconConfig} from "@lodestar/config";
import {computeEpochAtSlot, computeStartSlotAtEpoch} from "@lodestar/state-transition";
import {multiaddr} from "@multiformats/multiaddr";
import type {SignedBeaconBlock} from "@lodestar/types";
import {toRootHex} from "@lodestar/utils";
import {SLOTS_PER_EPOCH} from "@lodestar/params";
import type {BeaconChain} from "../chain/beaconChain.ts";
import type {NetworkContext, NetworkPeer} from "./networkContext.ts";
import {getLogger} from "../log.ts";
import type {OperationPools} from "../pools/index.ts";
import {RangeSync} from "../sync/rangeSync.ts";
import {UnknownBlockSync} from "../sync/unknownBlockSync.ts";
import {blocksByRange, blocksByRoot} from "./blockProvider.ts";
import {ourCustodyGroupCount, samplingColumns, validatorsCustodyRequirement} from "./custody.ts";
import {blobSidecarsByRange, blobSidecarsByRoot, dataColumnSidecarsByRange, dataColumnSidecarsByRoot} from "./sidecarProvider.ts";
import {lightClientBootstrap, lightClientFinalityUpdate, lightClientOptimisticUpdate, lightClientUpdatesByRange} from "./lightClientProvider.ts";
import {SidecarSync} from "../sync/sidecarSync.ts";
import {createGossipValidators} from "./gossip/validation/index.ts";
import {blockErrorOutcome} from "./gossip/validation/outcomes.ts";
import {createGossipDataTransform, createMsgIdFn, fastMsgIdFn} from "./gossip/encoding.ts";
import {gossipsubOptions, updateTopicScores} from "./gossip/scoringParams.ts";
import {GossipRouter, shouldJoinGossip} from "./gossipRouter.ts";
import type {NodeIdentity} from "./identity.ts";
import {createBeaconLibp2p} from "./libp2p.ts";
import {PeerManager} from "./peers/peerManager.ts";
import {PeerScores} from "./peers/peerScore.ts";
import {ReqResp} from "./reqresp/reqResp.ts";
import {ourStatus} from "./status.ts";
import {SubnetService} from "./subnets.ts";
import {Discovery, dialDiscovered} from "./discovery.ts";
import {startLightClientPublisher} from "./lightClientPublisher.ts";
import type {NetworkOptions} from "./options.ts";
import type {NodeMetrics} from "../metrics/nodeMetrics.ts";
import {createBackfill} from "./backfillService.ts";

const log = getLogger("network");


export interface NetworkDeps {
  chain: BeaconChain;
  pools: OperationPools;
  identity: NodeIdentity;
  /** the node's secp256k1 key, 32 raw bytes */
  privateKey: Uint8Array;
  metrics?: Pick<NodeMetrics, "gossipReceived" | "gossipPublished" | "reqResp" | "backfill">;
}

export interface RunningNetwork {
  /** what the REST API sees of the network */
  api: NetworkContext;
  /** whether the node is catching up with its peers (validator duties wait meanwhile) */
  isSyncing(): boolean;
  stop(): Promise<void>;
}

/**
 * The network's composition root: the libp2p host, req/resp, the peer manager, gossip and
 * subnets, discovery and sync, wired to the chain and the pools.
 */
export async function startNetwork(deps: NetworkDeps, opts: NetworkOptions): Promise<RunningNetwork> {
  const {chain, identity} = deps;
  const config: BeaconConfig = chain.config;
  const currentEpoch = () => computeEpochAtSlot(chain.currentSlot());
  const scores = new PeerScores();
  // topic scores for every scheduled fork boundary, so topics keep their scores across forks
  const topicScoreInput = () => ({
    currentSlot: chain.currentSlot(),
    activeValidatorCount: chain.getHeadState().epochCtx.currentShuffling.activeIndices.length,
    boundaries: config.forkBoundariesAscendingEpochOrder.filter((b) => Number.isFinite(b.epoch)),
  });
  const libp2p = await createBeaconLibp2p({
    privateKey: deps.privateKey,
    listenAddress: opts.listenAddress,
    tcpPort: opts.tcpPort,
    quicPort: opts.quic ? opts.quicPort : null,
    maxConnections: opts.maxPeers + 5,
    gossip: {
      ...gossipsubOptions(config, topicScoreInput()),
      msgIdFn: createMsgIdFn(config),
      fastMsgIdFn,
      dataTransform: createGossipDataTransform(config),
      asyncValidation: true,
      directPeers: [],
    },
    isBanned: (peerId) => scores.isBanned(peerId.toString()),
  });

  let peers: PeerManager | null = null;
  const reqResp = new ReqResp({
    libp2p,
    config,
    currentEpoch,
    handlers: {
      onStatus: (peer, status) => peers!.onStatusRequest(peer, status),
      onGoodbye: (peer, reason) => peers!.onGoodbye(peer, reason),
      onPing: () => identity.metadata().seqNumber,
      onMetadata: () => identity.metadata(),
      onBeaconBlocksByRange: (_peer, req) => blocksByRange(chain, req.startSlot, req.count, req.step),
      onBeaconBlocksByRoot: (_peer, roots) => blocksByRoot(chain, roots),
      onBlobSidecarsByRange: (_peer, req) => blobSidecarsByRange(chain, req),
      onBlobSidecarsByRoot: (_peer, ids) => blobSidecarsByRoot(chain, ids),
      onDataColumnSidecarsByRange: (_peer, req) => dataColumnSidecarsByRange(chain, req),
      onDataColumnSidecarsByRoot: (_peer, ids) => dataColumnSidecarsByRoot(chain, ids),
      onLightClientBootstrap: (_peer, root) => lightClientBootstrap(chain.lightClient, root),
      onLightClientUpdatesByRange: (_peer, req) => lightClientUpdatesByRange(chain.lightClient, req),
      onLightClientFinalityUpdate: () => lightClientFinalityUpdate(chain.lightClient),
      onLightClientOptimisticUpdate: () => lightClientOptimisticUpdate(chain.lightClient),
    },
    onPeerMisbehaved: (peer, reason, severity) => peers!.report(peer, severity, reason),
    metrics: deps.metrics,
  });

  peers = new PeerManager(
    {
      libp2p,
      requests: reqResp,
      scores,
      ourStatus: () => ourStatus(chain, backfill.earliestAvailableSlot()),
      currentSlot: () => chain.currentSlot(),
      metadataSeq: () => identity.metadata().seqNumber,
      checkpointRootAt: (epoch) => checkpointRootAt(chain, epoch),
      discoverPeers: (count) => void discovery?.findPeers(count, {attnets: subnets.state().dutyAttnets}),
      gossipScore: (peer) => libp2p.services.gossipsub.getScore(peer),
    },
    {targetPeers: opts.targetPeers, maxPeers: opts.maxPeers, directPeers: opts.directPeers}
  );
  const peerManager = peers;

  const sidecarSync = new SidecarSync({
    config,
    dataAvailability: chain.dataAvailability,
    peers: () => peerManager.syncPeers().map((p) => p.peerId),
    report: (peer, action, reason) => peerManager.report(peer, action, reason),
    blobSidecarsByRange: (peer, req) => reqResp.blobSidecarsByRange(peer, req),
    blobSidecarsByRoot: (peer, ids) => reqResp.blobSidecarsByRoot(peer, ids),
    dataColumnSidecarsByRange: (peer, req) => reqResp.dataColumnSidecarsByRange(peer, req),
    dataColumnSidecarsByRoot: (peer, ids) => reqResp.dataColumnSidecarsByRoot(peer, ids),
  });
  chain.dataAvailability.setFetcher((block, root, missing) => sidecarSync.fetchMissing(block, root, missing));

  const rangeSync = new RangeSync({
    chain,
    syncPeers: () => peerManager.syncPeers(),
    report: (peer, action, reason) => peerManager.report(peer, action, reason),
    fetchBlocksByRange: async (peer, startSlot, count) => {
      const blocks = await reqResp.beaconBlocksByRange(peer, {startSlot, count, step: 1});
      await sidecarSync.fetchForBlocks(peer, blocks);
      return blocks;
    },
  });
  // blocks before a checkpoint-synced node's anchor, fetched in the background while head sync
  // is idle; status v2's earliest_available_slot (read from it) follows it down
  const backfill = createBackfill({chain, reqResp, peers: () => peerManager, headSyncing: () => rangeSync.isSyncing(), toGenesis: opts.backfillToGenesis, metrics: deps.metrics?.backfill});
  await backfill.load();
  peerManager.on("status", (_peer, status) => {
    rangeSync.onPeerStatus(status);
    backfill.wake();
  });
  rangeSync.on("done", (_head, progressed) => {
    // peers may have moved on while we imported: go again if one is still ahead (and the
    // round got somewhere: a peer whose status claims more than it serves waits for its next status)
    if (progressed) for (const p of peerManager.syncPeers()) rangeSync.onPeerStatus(p.status);
  });

  const unknownBlockSync = new UnknownBlockSync({
    chain,
    hasBlock: (root) => chain.forkChoice.hasBlock(root),
    fetchBlocksByRoot: (peer, roots) => reqResp.beaconBlocksByRoot(peer, roots),
    report: (peer, action, reason) => peerManager.report(peer, action, reason),
  });

  /** A gossip block, forwarded already, imported now; a sender of a block the import finds invalid is scored down. */
  const importGossipBlock = (block: SignedBeaconBlock, from: string): void => {
    chain.importBlock(block).catch((e: Error) => {
      const outcome = blockErrorOutcome(e, toRootHex(block.message.parentRoot));
      log.debug({slot: block.message.slot, from, result: outcome.result, reason: outcome.reason}, "gossip block not imported");
      if (outcome.result === "REJECT") peerManager.report(from, "low", `gossip block: ${outcome.reason}`);
    });
  };
  const gossip = new GossipRouter({
    gossipsub: libp2p.services.gossipsub,
    config,
    currentEpoch,
    validators: createGossipValidators({config, chain, pools: deps.pools, clock: chain.clock, importBlock: importGossipBlock}),
    stateAtEpoch: (epoch) => chain.getHeadStateAtEpoch(epoch),
    committeesPerSlot: async (target) => (await chain.targetShufflings.get(target)).committeesPerSlot,
    onParentUnknown: (block, from) => unknownBlockSync.onUnknownParent(block, from),
    // gossipsub scores a REJECT on its own; the node's score counts it too, so a peer that keeps
    // sending invalid messages is disconnected and banned
    onRejected: (from, reason) => peerManager.report(from, "low", `gossip: ${reason}`),
    metrics: deps.metrics,
  });

  // columns built from the execution engine's blobs or rebuilt from half of them, published as if
  // they had come over gossip (on the subnets of the columns the node samples, those it joins)
  chain.dataAvailability.columnSources.setPublisher((sidecars) => {
    for (const data of sidecars) void gossip.publish({type: "data_column_sidecar", data}).catch((e: Error) => log.debug({err: e.message}, "column publish failed"));
  });

  // data columns (fulu): a supernode keeps every custody group, a semi-supernode half, others the spec's minimum, raised
  // with the effective balance of the validators attached (those that post committee subscriptions)
  const nodeIdNumber = BigInt("0x" + identity.nodeId.replace(/^0x/, ""));
  let custodyGroupCount = 0;
  const setCustody = (count: number) => {
    if (count <= custodyGroupCount) return; // custody only grows: peers may rely on what was advertised
    const raised = custodyGroupCount > 0;
    custodyGroupCount = count;
    // fulu validator.md: the highest count SHOULD persist across restarts
    if (raised) void chain.db.chainMeta.custodyGroupCount.put(count).catch((e: Error) => log.warn({err: e.message}, "could not store the custody group count"));
    const sampledColumns = samplingColumns(config, nodeIdNumber, count);
    identity.setCustodyGroupCount(count);
    chain.dataAvailability.setSamplingColumns(sampledColumns);
    gossip.setDataColumnSubnets([...new Set(sampledColumns.map((c) => c % config.DATA_COLUMN_SIDECAR_SUBNET_COUNT))]);
    if (count > config.CUSTODY_REQUIREMENT) log.info({custodyGroupCount: count, columns: sampledColumns.length}, "data column custody set");
  };
  setCustody(Math.max(ourCustodyGroupCount(config, opts.subscribeAllSubnets, opts.semiSupernode), (await chain.db.chainMeta.custodyGroupCount.get()) ?? 0));
  const attachedValidators = new Set<number>();
  const updateValidatorCustody = () => {
    if (attachedValidators.size === 0) return;
    // the spec reads the balances in the latest finalized state
    void chain.getStateByBlockRoot(chain.getFinalizedCheckpoint().root).then((state) => {
      state ??= chain.getHeadState();
      const known = [...attachedValidators].filter((i) => i < state.validators.length);
      setCustody(validatorsCustodyRequirement(config, known.map((i) => state.validators.getReadonly(i).effectiveBalance)));
    }).catch((e: Error) => log.warn({err: e.message}, "could not compute the validators' custody requirement"));
  };

  const subnets = new SubnetService({config, nodeId: identity.nodeId, currentSlot: () => chain.currentSlot(), subscribeAll: opts.subscribeAllSubnets});
  subnets.onChange(({attnets, syncnets, enrAttnets, enrSyncnets}) => {
    gossip.setSubnets(attnets, syncnets);
    identity.setSubnets({attnets: enrAttnets, syncnets: enrSyncnets});
  });

  const updateGossipJoined = (joined: boolean): void =>
    gossip.setJoined(shouldJoinGossip(joined, chain.currentSlot() - chain.getHead().slot, rangeSync.isSyncing()));
  // a node restarted far behind the head joins gossip once range sync has brought it there
  updateGossipJoined(false);
  rangeSync.on("done", () => {
    updateGossipJoined(gossip.isJoined());
    backfill.wake();
  });

  await libp2p.start();
  await reqResp.start();
  gossip.start();
  // the long-lived subnets now, not at the next slot: peers that connect at once ask for our
  // metadata, and Lodestar prunes peers that show no long-lived subnet
  subnets.onSlot(chain.currentSlot());

  const tcpPort = Number(libp2p.getMultiaddrs()[0]?.getComponents().find((c) => c.name === "tcp")?.value ?? opts.tcpPort);
  // the ENR advertises where others reach us: --enr-address, else a specific listen address
  const enrIp = opts.enrAddress ?? (opts.listenAddress !== "0.0.0.0" && opts.listenAddress !== "::" ? opts.listenAddress : undefined);
  const quicPort = libp2p.getMultiaddrs().map((a) => a.getComponents()).find((c) => c.some((x) => x.name === "quic-v1"))?.find((c) => c.name === "udp")?.value;
  identity.setAddresses(enrIp ? {ip: enrIp, tcp: tcpPort, udp: opts.discovery ? opts.udpPort : undefined, quic: quicPort === undefined ? undefined : Number(quicPort)} : {});
  const discovery = opts.discovery
    ? new Discovery({
        identity,
        privateKey: deps.privateKey,
        bindAddress: opts.listenAddress,
        udpPort: opts.udpPort,
        bootEnrs: opts.bootnodes,
        forkDigest: () => config.forkBoundary2ForkDigest(config.getForkBoundaryAtEpoch(currentEpoch())),
        // no --enr-address and a wildcard listen address: the address peers see us at, with our ports
        onExternalAddress: ({ip, udp}) => {
          const quic = quicPort === undefined ? undefined : Number(quicPort);
          identity.setAddresses(isIPv6(ip) ? {ip6: ip, tcp6: tcpPort, udp6: udp, quic6: quic} : {ip, tcp: tcpPort, udp, quic});
        },
        // over QUIC when both ends have it, else (or when that fails) over TCP
        onPeer: (peer) => {
          if (peerManager.connected().length < opts.maxPeers) void dialDiscovered(peer, quicPort !== undefined, (address) => libp2p.dial(multiaddr(address)));
        },
      })
    : null;
  await discovery?.start();
  identity.setListenAddresses(
    libp2p.getMultiaddrs().map((a) => a.toString()),
    discovery?.discoveryAddresses() ?? []
  );
  // last, once discovery exists: the peer manager's first heartbeat dials and asks discovery for peers
  peerManager.start();
  backfill.start();
  log.info({peerId: identity.peerId, addresses: identity.p2pAddresses(), enr: identity.enr()}, "network started");

  const onSlot = (slot: number) => {
    subnets.onSlot(slot);
    updateGossipJoined(gossip.isJoined());
    backfill.wake();
    if (slot % SLOTS_PER_EPOCH === 0) {
      updateValidatorCustody(); // effective balances move at epoch boundaries
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

  const api: NetworkContext = {
    publish: (message) => void gossip.publish(message).catch((e: Error) => log.debug({type: message.type, err: e.message}, "publish failed")),
    peers: () => peerManager.all().map((p): NetworkPeer => ({
      peerId: p.peerId,
      enr: null,
      lastSeenP2pAddress: p.address,
      state: p.state,
      direction: p.direction,
      score: scores.score(p.peerId),
      agentVersion: p.agentVersion,
    })),
    gossipView: () => {
      const gs = libp2p.services.gossipsub;
      const gossipsub: Record<string, string[]> = {};
      const mesh: Record<string, string[]> = {};
      for (const topic of gs.getTopics()) {
        gossipsub[topic] = gs.getSubscribers(topic).map(String);
        mesh[topic] = gs.getMeshPeers(topic);
      }
      const allPeers = gs.getPeers().map(String);
      return {gossipsub, mesh, colocationPeers: [], peerStats: allPeers.map((peerId) => ({peerId, score: gs.getScore(peerId)})), allPeers};
    },
    addCommitteeSubscriptions: (subs) => {
      const before = attachedValidators.size;
      for (const sub of subs) attachedValidators.add(sub.validatorIndex);
      if (attachedValidators.size > before) updateValidatorCustody();
      subnets.addCommitteeSubscriptions(subs);
    },
    addSyncCommitteeSubscriptions: (subs) => subnets.addSyncCommitteeSubscriptions(subs),
  };

  return {
    api,
    isSyncing: () => rangeSync.isSyncing(),
    async stop() {
      chain.clock.off("slot", onSlot);
      stopLightClientPublisher();
      chain.dataAvailability.setFetcher(null);
      chain.dataAvailability.columnSources.setPublisher(null);
      await rangeSync.stop();
      await backfill.stop();
      await discovery?.stop();
      await peerManager.stop();
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

// suite: alone (floods must not make the node fall behind its slots)
import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {SecretKey} from "@chainsafe/blst";
import {peerIdFromString} from "@libp2p/peer-id";
import {createBeaconConfig, type BeaconConfig} from "@lodestar/config";
import {DOMAIN_BEACON_ATTESTER, type ForkName} from "@lodestar/params";
import {computeEpochAtSlot, computeSigningRoot, interopSecretKey} from "@lodestar/state-transition";
import {ssz, sszTypesFor} from "@lodestar/types";
import {multiaddr, type Multiaddr} from "@multiformats/multiaddr";
import {compressSync} from "snappy";
import {devChainConfig} from "../../src/config/chainConfig.ts";
import {maxPayloadSize} from "../../src/network/gossip/encoding.ts";
import {stringifyTopic, type GossipType} from "../../src/network/gossip/topics.ts";
import {encodePayload, encodeVarint} from "../../src/network/reqresp/encoding.ts";
import {BAN_THRESHOLD, DISCONNECT_THRESHOLD} from "../../src/network/peers/peerScore.ts";
import {protocolId, RespStatus} from "../../src/network/reqresp/index.ts";
import {computeSubnetForAttestation} from "../../src/network/subnets.ts";
import {createHostilePeer, LatencySampler, NodeView, rawRequest, waitFor, type HostilePeer, type LatencyReport, type RawOutcome} from "./hostilePeer.ts";
import {NodeProcess, getJson, tempDataDir} from "./nodeProcess.ts";

/**
 * A real node process against real hostile libp2p peers on loopback. Malformed, oversized and
 * invalid gossip and req/resp messages are rejected as the p2p spec says and score the sender
 * down until the node disconnects and bans it; meanwhile the node stays up, its REST API keeps
 * answering quickly (its event loop never stalls), it keeps proposing blocks (at most two of the
 * attack's slots without one) with its head within three slots of the clock, and nothing the
 * peers injected reaches fork choice or the pools.
 */

const SECONDS_PER_SLOT = 2;
/** messages in each gossip flood */
const FLOOD_MESSAGES = 2000;

const hex = (bytes: Uint8Array) => "0x" + Buffer.from(bytes).toString("hex");
const fromHex = (text: string) => Uint8Array.from(Buffer.from(text.replace(/^0x/, ""), "hex"));

describe("a node under attack by hostile peers", () => {
  const data = tempDataDir("hostile");
  const hostiles: HostilePeer[] = [];
  let node: NodeProcess;
  let url: string;
  let view: NodeView;
  let config: BeaconConfig;
  let genesisTime: number;
  let nodePeerId: string;
  let nodeAddress: Multiaddr;
  let sampler: LatencySampler | null = null;
  let latency: LatencyReport | null = null;
  /** the largest gap seen between the wall-clock slot and the node's head slot */
  let maxHeadLag = 0;
  let headWatch: NodeJS.Timeout | null = null;
  let attackStartSlot = 0;
  /** roots of what the peers injected: none may ever be known to the node */
  const injectedBlockRoots: string[] = [];
  let injectedVote: {slot: number; root: string} | null = null;

  const currentSlot = () => Math.floor((Date.now() / 1000 - genesisTime) / SECONDS_PER_SLOT);
  const currentEpoch = () => computeEpochAtSlot(Math.max(0, currentSlot()));
  const topic = (type: GossipType, subnet?: number) => stringifyTopic(config, {type, subnet, boundary: config.getForkBoundaryAtEpoch(currentEpoch())});
  const forkDigest = () => config.forkBoundary2ForkDigest(config.getForkBoundaryAtEpoch(currentEpoch()));

  /** A peer that connects and passes the status handshake: the node logs it joined. */
  async function connectHostile(): Promise<HostilePeer> {
    const peer = await createHostilePeer(config, currentEpoch, () => view.chainStatus(forkDigest()));
    hostiles.push(peer);
    // the node's libp2p admits 5 new inbound connections a second from one address, and every
    // peer of this test (and each redial after a ban) comes from 127.0.0.1: retry as a peer would
    for (let attempt = 1; ; attempt++) {
      try {
        await peer.libp2p.dial(nodeAddress, {signal: AbortSignal.timeout(10_000)});
        break;
      } catch (e) {
        if (attempt >= 5) throw e;
        await new Promise((r) => setTimeout(r, 1_100));
      }
    }
    const theirs = await peer.reqResp.status(nodePeerId, await view.chainStatus(forkDigest()));
    expect(hex(theirs.forkDigest)).toBe(hex(forkDigest()));
    await node.waitForLog((l) => l.msg === "peer joined" && l.peer === peer.peerId, 15_000, "the node to accept the hostile peer");
    expect(await view.peerState(peer.peerId)).toBe("connected");
    return peer;
  }

  /** Waits until the node has disconnected and banned `peer`, and checks that it cannot come back. */
  async function expectBanned(peer: HostilePeer, timeoutMs: number): Promise<void> {
    let seen = "";
    await waitFor("the node to ban the peer", timeoutMs, async () => {
      const [score, state, gossip] = await Promise.all([view.score(peer.peerId), view.peerState(peer.peerId), view.gossipScore(peer.peerId)]);
      seen = `score ${score}, state ${state}, gossipsub score ${gossip}`;
      return score !== null && score <= BAN_THRESHOLD && state === "disconnected";
    }).catch((e: Error) => {
      throw new Error(`${e.message}: ${seen}`);
    });
    await waitFor("the connection to close", 5_000, async () => peer.libp2p.getConnections(peerIdFromString(nodePeerId)).length === 0);
    // a banned peer's new connection is refused: it cannot even get a status answer
    const redial = await peer.libp2p
      .dial(nodeAddress, {signal: AbortSignal.timeout(5_000)})
      .then(async (connection) => {
        await peer.reqResp.status(nodePeerId, await view.chainStatus(forkDigest()), AbortSignal.timeout(5_000));
        return `connected (${connection.status})`;
      })
      .catch((e: Error) => `refused: ${e.message}`);
    expect(redial).toMatch(/^refused/);
    expect(await view.peerState(peer.peerId)).toBe("disconnected");
    // gone for good: its libp2p would otherwise keep redialing from 127.0.0.1, using up the
    // node's allowance of new connections from that address for the next peer of the test
    await peer.stop();
  }

  beforeAll(async () => {
    node = new NodeProcess(["node", "--rest", "--rest-port", "0", "--data-dir", data.dir, "--seconds-per-slot", String(SECONDS_PER_SLOT), "--log-level", "INFO; TRACE:network"]);
    url = await node.restUrl();
    view = new NodeView(url);
    const genesis = (await getJson(url, "/eth/v1/beacon/genesis")).body.data;
    genesisTime = Number(genesis.genesis_time);
    config = createBeaconConfig(devChainConfig({secondsPerSlot: SECONDS_PER_SLOT, genesisFork: "fulu", forkEpochs: {}}), fromHex(genesis.genesis_validators_root));
    const identity = (await getJson(url, "/eth/v1/node/identity")).body.data;
    nodePeerId = identity.peer_id;
    nodeAddress = multiaddr((identity.p2p_addresses as string[]).find((a) => a.startsWith("/ip4/127.0.0.1/tcp/"))!);
    // the chain runs: blocks are being made before any peer shows up
    await waitFor("the first blocks", 30_000, async () => (await view.headSlot()) >= 2, 250);
    // our fork digest (from the chain config and the genesis) is the node's: its topics carry it
    expect(Object.keys((await view.gossip()).gossipsub)).toContain(topic("beacon_block"));

    attackStartSlot = currentSlot();
    sampler = new LatencySampler(`${url}/eth/v1/node/version`);
    headWatch = setInterval(() => {
      const slot = currentSlot();
      void view
        .headSlot()
        .then((head) => (maxHeadLag = Math.max(maxHeadLag, slot - head)))
        .catch(() => undefined);
    }, 500);
  }, 90_000);

  afterAll(async () => {
    if (headWatch) clearInterval(headWatch);
    if (sampler && !latency) await sampler.stop().catch(() => undefined);
    for (const peer of hostiles) await peer.stop();
    if (node) {
      const killer = setTimeout(() => node.proc.kill("SIGKILL"), 15_000);
      const exit = await node.stop();
      clearTimeout(killer);
      expect(exit.code).toBe(0);
    }
    data.remove();
  }, 30_000);

  // one scenario after another (jest runs a describe's own tests before those of nested ones, so none are nested)
  let gossipPeer: HostilePeer;
  /** one of the node's long-lived attestation subnets (those its metadata advertises), which stay for many epochs */
  let subnet: number;
  const gossipTopics = () => [topic("beacon_block"), topic("beacon_aggregate_and_proof"), topic("beacon_attestation", subnet)];

  /** A peer in the node's mesh of the block, aggregate and attestation subnet topics. */
  async function connectGossipPeer(): Promise<HostilePeer> {
    const peer = await connectHostile();
    const gossipsub = peer.libp2p.services.gossipsub;
    const topics = gossipTopics();
    for (const t of topics) gossipsub.subscribe(t);
    await waitFor("the gossip mesh with the node", 15_000, async () => {
      const mesh = (await view.gossip()).mesh;
      return topics.every((t) => mesh[t]?.includes(peer.peerId) && gossipsub.getSubscribers(t).map(String).includes(nodePeerId));
    });
    return peer;
  }

  /** Publishes `count` messages as fast as the peer can while it is connected; returns how many went out. */
  async function flood(peer: HostilePeer, count: number, message: (i: number) => {topic: string; bytes: Uint8Array}): Promise<number> {
    const start = Date.now();
    let published = 0;
    for (let i = 0; i < count && peer.libp2p.getConnections(peerIdFromString(nodePeerId)).length > 0; i++) {
      const {topic, bytes} = message(i);
      try {
        await peer.libp2p.services.gossipsub.publish(topic, bytes);
        published++;
      } catch {
        // the node dropped us (or its subscriptions toward us) mid-flood
      }
    }
    expect(Date.now() - start).toBeLessThan(15_000);
    return published;
  }

  it("rejects malformed and invalid messages, scores their sender down, and lets none of them in", async () => {
    const attnets = fromHex((await getJson(url, "/eth/v1/node/identity")).body.data.metadata.attnets);
    subnet = Array.from({length: attnets.length * 8}, (_, i) => i).find((i) => (attnets[i >> 3] >> (i & 7)) & 1)!;
    expect(Object.keys((await view.gossip()).gossipsub)).toContain(topic("beacon_attestation", subnet));
    const peer = (gossipPeer = await connectGossipPeer());
    const gossipsub = peer.libp2p.services.gossipsub;
    expect(await view.gossipScore(peer.peerId)).toBeGreaterThanOrEqual(0);

    // (a) bytes that are not snappy: the length preamble itself is malformed
    await gossipsub.publish(topic("beacon_block"), Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x02, 0x03));
    const afterA = await waitFor("gossipsub to penalize invalid snappy", 10_000, async () => {
      const score = await view.gossipScore(peer.peerId);
      return score !== null && score < 0 ? score : null;
    });

    // (b) a snappy block that declares more than MAX_PAYLOAD_SIZE: refused before decompressing
    const oversized = new Uint8Array([...encodeVarint(maxPayloadSize(config) + 1), 0x00, 0x41]);
    await gossipsub.publish(topic("beacon_block"), oversized);
    await waitFor("gossipsub to penalize the oversized message", 10_000, async () => ((await view.gossipScore(peer.peerId)) ?? 0) < afterA);

    // (c) valid snappy of bytes that are not a SignedBeaconBlock: REJECT, and the node's own score of the peer drops
    const notABlock = new Uint8Array(ssz.fulu.SignedBeaconBlock.minSize + 64).fill(0xee);
    await gossipsub.publish(topic("beacon_block"), compressSync(Buffer.from(notABlock)));
    await node.waitForLog((l) => l.msg === "gossip message does not decode" && l.from === peer.peerId, 10_000, "the undecodable block to be rejected");
    const afterC = await waitFor("the node to score the peer down", 10_000, async () => {
      const score = await view.score(peer.peerId);
      return score !== null && score < -0.5 ? score : null;
    });

    // (d) a well-formed block for the current slot with a wrong signature: the head block moved to another slot and proposer
    const res = await fetch(`${url}/eth/v2/beacon/blocks/head`, {headers: {accept: "application/octet-stream"}});
    expect(res.status).toBe(200);
    const types = sszTypesFor(res.headers.get("eth-consensus-version") as ForkName);
    const block = types.SignedBeaconBlock.deserialize(new Uint8Array(await res.arrayBuffer()));
    const slot = currentSlot();
    const duties = (await getJson(url, `/eth/v1/validator/duties/proposer/${computeEpochAtSlot(slot)}`)).body.data as Array<{slot: string; validator_index: string}>;
    const proposer = Number(duties.find((d) => Number(d.slot) === slot)!.validator_index);
    block.message.slot = slot;
    block.message.proposerIndex = (proposer + 1) % 64; // not the slot's proposer, whose block the node may have seen already
    const badRoot = hex(types.BeaconBlock.hashTreeRoot(block.message));
    injectedBlockRoots.push(badRoot);
    await gossipsub.publish(topic("beacon_block"), compressSync(Buffer.from(types.SignedBeaconBlock.serialize(block))));
    const rejected = await node.waitForLog(
      (l) => l.msg === "gossip message not accepted" && l.from === peer.peerId && String(l.reason).includes("invalid proposer signature"),
      10_000,
      "the badly signed block to be rejected"
    );
    expect(rejected.result).toBe("REJECT");
    await waitFor("the node to score the peer down again", 10_000, async () => ((await view.score(peer.peerId)) ?? 0) < afterC - 0.5);
    expect((await getJson(url, `/eth/v1/beacon/headers/${badRoot}`)).status).toBe(404);

    // (e) an attestation on the wrong subnet, otherwise made with care: a committee member's, signed with its key
    const attSlot = currentSlot() - 1;
    const committees = (await getJson(url, `/eth/v1/beacon/states/head/committees?slot=${attSlot}`)).body.data as Array<{index: string; validators: string[]}>;
    // a committee of the slot whose subnet is not the one we publish on
    const committee = committees.find((c) => computeSubnetForAttestation(committees.length, attSlot, Number(c.index)) !== subnet)!;
    const committeeIndex = Number(committee.index);
    const attesterIndex = Number(committee.validators[0]);
    const rightSubnet = computeSubnetForAttestation(committees.length, attSlot, committeeIndex);
    const genesisRoot = (await getJson(url, "/eth/v1/beacon/headers/0")).body.data.root as string;
    const justified = (await getJson(url, "/eth/v1/beacon/states/head/finality_checkpoints")).body.data.current_justified;
    const epoch = computeEpochAtSlot(attSlot);
    // a vote for the genesis block, which no honest validator casts at this slot
    const attData = {
      slot: attSlot,
      index: 0,
      beaconBlockRoot: fromHex(genesisRoot),
      source: {epoch: Number(justified.epoch), root: fromHex(justified.root)},
      target: {epoch, root: fromHex(genesisRoot)},
    };
    injectedVote = {slot: attSlot, root: genesisRoot};
    const domain = config.getDomain(attSlot, DOMAIN_BEACON_ATTESTER, attSlot);
    const secretKey: SecretKey = interopSecretKey(attesterIndex);
    const attestation = {
      committeeIndex,
      attesterIndex,
      data: attData,
      signature: secretKey.sign(computeSigningRoot(ssz.phase0.AttestationData, attData, domain)).toBytes(),
    };
    const beforeE = (await view.score(peer.peerId)) ?? 0;
    await gossipsub.publish(topic("beacon_attestation", subnet), compressSync(Buffer.from(ssz.electra.SingleAttestation.serialize(attestation))));
    const wrongSubnetLog = await node.waitForLog(
      (l) => l.msg === "gossip message not accepted" && l.from === peer.peerId && String(l.reason).includes(`belongs to subnet ${rightSubnet}, not ${subnet}`),
      10_000,
      "the attestation on the wrong subnet to be rejected"
    );
    expect(wrongSubnetLog.result).toBe("REJECT");
    await waitFor("the node to score the peer down once more", 10_000, async () => ((await view.score(peer.peerId)) ?? 0) < beforeE - 0.5);
    expect(await view.poolVotes(injectedVote)).toEqual([]);

    // a few rejected messages are not enough to drop a peer
    expect(await view.peerState(peer.peerId)).toBe("connected");
  }, 60_000);

  it("bans a peer that floods what only gossipsub sees (not snappy, over the size limit), without falling behind", async () => {
    // these never reach the node's validation: gossipsub's score of the peer is what gets it banned
    const topics = gossipTopics();
    const tooLarge = encodeVarint(maxPayloadSize(config) + 1);
    const published = await flood(gossipPeer, FLOOD_MESSAGES, (i) => {
      const counter = Buffer.alloc(4);
      counter.writeUInt32LE(i);
      const bytes = i % 2 === 0 ? [0xff, 0xff, 0xff, 0xff, 0xff, ...counter] : [...tooLarge, 0x0c, ...counter];
      return {topic: topics[i % topics.length], bytes: Uint8Array.from(bytes)};
    });
    expect(published).toBeGreaterThan(50);
    await expectBanned(gossipPeer, 20_000);
  }, 60_000);

  it("bans a peer that floods undecodable messages, without falling behind", async () => {
    const peer = await connectGossipPeer();
    const topics = gossipTopics();
    const minSizes = [ssz.fulu.SignedBeaconBlock.minSize, ssz.electra.SignedAggregateAndProof.minSize, ssz.electra.SingleAttestation.minSize];
    const published = await flood(peer, FLOOD_MESSAGES, (i) => {
      const t = i % topics.length;
      // valid snappy within the size limits, of bytes that are not the topic's type (a different message each time)
      const garbage = Buffer.alloc(minSizes[t] + 8, 0xee);
      garbage.writeUInt32LE(i, minSizes[t]);
      return {topic: topics[t], bytes: compressSync(garbage)};
    });
    expect(published).toBeGreaterThan(50);
    await node.waitForLog((l) => l.msg === "gossip message does not decode" && l.from === peer.peerId, 10_000, "undecodable messages to be rejected");
    await expectBanned(peer, 20_000);
  }, 60_000);

  const BY_RANGE = protocolId("beacon_blocks_by_range", 2);
  const validRequest = encodePayload(ssz.phase0.BeaconBlocksByRangeRequest.serialize({startSlot: 0, count: 1024, step: 1}));
  const raw = (peer: HostilePeer, bytes: Uint8Array, opts: {keepOpen?: boolean; timeoutMs?: number} = {}) =>
    rawRequest(peer.libp2p, peerIdFromString(nodePeerId), BY_RANGE, bytes, {contextBytes: true, timeoutMs: opts.timeoutMs ?? 20_000, keepOpen: opts.keepOpen});

  it("answers malformed requests with InvalidRequest, drops a request that never completes, and bans a peer that floods it", async () => {
    const peer = await connectHostile();

    const [garbage, oversized, truncated, incomplete] = await Promise.all([
      // a length prefix, then bytes that are not snappy frames
      raw(peer, new Uint8Array([...encodeVarint(24), ...Buffer.from("these bytes are not snappy frames")])),
      // a length prefix far beyond the request type's size
      raw(peer, new Uint8Array([...encodeVarint(2 ** 40), 0xff, 0x06, 0x00])),
      // a valid request cut short before the end of its frames
      raw(peer, validRequest.subarray(0, validRequest.length - 4)),
      // a request whose sender never finishes nor closes: the node must not wait for it forever
      raw(peer, validRequest.subarray(0, 8), {keepOpen: true}),
    ]);
    const invalid: RawOutcome[] = [garbage, oversized, truncated];
    for (const outcome of invalid) {
      expect(outcome).toMatchObject({kind: "response", status: RespStatus.INVALID_REQUEST, successChunks: 0});
      expect(outcome.ms).toBeLessThan(3_000);
    }
    // RESP_TIMEOUT (10 s): the node resets the stream rather than hang on to it
    expect(incomplete.kind).toBe("reset");
    expect(incomplete.ms).toBeLessThan(16_000);
    const score = await waitFor("the invalid requests to be scored", 5_000, async () => {
      const s = await view.score(peer.peerId);
      return s !== null && s <= -14.5 ? s : null;
    });
    expect(score).toBeGreaterThan(DISCONNECT_THRESHOLD);
    expect(await view.peerState(peer.peerId)).toBe("connected");

    // 50 requests at once, each for 1024 blocks (the node caps them to MAX_REQUEST_BLOCKS_DENEB):
    // a few are served, the rest are held back or refused, and the peer over its quota is banned
    const outcomes = await Promise.all(Array.from({length: 50}, () => raw(peer, validRequest, {timeoutMs: 30_000})));
    // a success may be cut short when the node drops the peer mid-response
    const served = outcomes.filter((o) => o.kind === "response" && o.status === RespStatus.SUCCESS);
    const rateLimited = outcomes.filter((o) => o.kind === "response" && o.status === RespStatus.RESOURCE_UNAVAILABLE);
    const byKind = (kind: string) => outcomes.filter((o) => o.kind === kind).length;
    expect(byKind("no answer")).toBe(0);
    expect(served.length).toBeGreaterThanOrEqual(1);
    // 1024 blocks per 10 s: 8 requests of 128 at once, and what refills while they are held back up to 2 s
    expect(served.length).toBeLessThanOrEqual(12);
    expect(rateLimited.length).toBeGreaterThanOrEqual(1);
    expect(served.length + rateLimited.length + byKind("reset") + byKind("refused")).toBe(50);
    for (const o of served) expect(o.kind === "response" && o.successChunks).toBeLessThanOrEqual(config.MAX_REQUEST_BLOCKS_DENEB);

    await expectBanned(peer, 20_000);
  }, 90_000);

  it("stayed up, answered its REST API quickly, kept making blocks, and let nothing injected in", async () => {
    latency = await sampler!.stop();
    if (headWatch) clearInterval(headWatch);
    const attackEndSlot = currentSlot();
    expect(node.proc.exitCode).toBeNull();
    expect(node.proc.signalCode).toBeNull();

    expect(latency.failures).toBe(0);
    expect(latency.samples).toBeGreaterThan(((attackEndSlot - attackStartSlot) * SECONDS_PER_SLOT * 1000) / 400);
    // no stall of the event loop: the API never took a second to answer
    expect(latency.maxMs).toBeLessThan(1_000);

    // a block in (nearly) every slot of the attack, and the head never far behind the clock
    let missed = 0;
    for (let slot = attackStartSlot + 1; slot < attackEndSlot; slot++) {
      const status = (await getJson(url, `/eth/v1/beacon/headers/${slot}`)).status;
      expect([200, 404]).toContain(status);
      if (status === 404) missed++;
    }
    console.log(`hostile peer: ${missed} of ${attackEndSlot - attackStartSlot - 1} slots of the attack without a block, head at most ${maxHeadLag} behind`);
    expect(missed).toBeLessThanOrEqual(2);
    expect(maxHeadLag).toBeLessThanOrEqual(3);
    await waitFor("the head to keep moving", 3 * SECONDS_PER_SLOT * 1000, async () => (await view.headSlot()) >= attackEndSlot);

    for (const root of injectedBlockRoots) expect((await getJson(url, `/eth/v1/beacon/headers/${root}`)).status).toBe(404);
    expect(injectedVote).not.toBeNull();
    expect(await view.poolVotes(injectedVote!)).toEqual([]);
    // the node never logged a crash or an unexpected failure on the way
    expect(node.logs.filter((l) => l.level >= 50)).toEqual([]);
    expect(node.stderr.join("")).toBe("");
  }, 30_000);
});

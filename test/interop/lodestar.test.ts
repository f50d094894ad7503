// suite: alone (Lodestar 1.5.1 must take each new head from gossip within 1.5 slots)
import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {writeFileSync} from "node:fs";
import {join} from "node:path";
import {NodeProcess, chainView, getJson, tempDataDir, waitFor} from "../e2e/nodeProcess.ts";
import {freePort, installLodestarPeer, LodestarProcess} from "./lodestarPeer.ts";

/**
 * beacon-gateway and an independent client, Lodestar 1.5.1 (mplex, gossipsub 1.1, bellatrix), on
 * loopback: Lodestar joins our chain, range-syncs it and follows our gossip; and our node joins
 * Lodestar's own chain, range-syncs it and follows Lodestar's gossip. Everything asserted is what
 * each node's REST API reports. The peer is installed once into node_modules/.cache/lodestar-peer.
 */

const SECONDS_PER_SLOT = 2;
const SLOT_MS = SECONDS_PER_SLOT * 1000;
/** the head slot a chain reaches before the other node joins, so that joining takes a range sync */
const HEAD_BEFORE_JOIN = 6;
/** consecutive new heads the follower must take from gossip, each within SLOT_MS * 1.5 */
const FOLLOWED_HEADS = 6;
const INSTALL_TIMEOUT_MS = 6 * 60_000;
const SCENARIO_TIMEOUT_MS = 3 * 60_000;
/** seconds from Lodestar's start to its genesis: its genesis state is fetched before its first block */
const LODESTAR_GENESIS_DELAY = 12;

const nodes: NodeProcess[] = [];
const peers: LodestarProcess[] = [];
const dirs: Array<{remove(): void}> = [];

function dataDir(name: string): string {
  const dir = tempDataDir(name);
  dirs.push(dir);
  return dir.dir;
}

async function startLodestar(env: Record<string, string>): Promise<LodestarProcess> {
  const lodestar = new LodestarProcess({restPort: await freePort(), p2pPort: await freePort(), dataDir: dataDir("lodestar"), env});
  peers.push(lodestar);
  await Promise.race([waitFor("Lodestar's REST API", 90_000, async () => (await getJson(lodestar.restUrl, "/eth/v1/node/identity")).body?.data ?? null), lodestar.crashed()]);
  return lodestar;
}

function startNode(args: string[]): NodeProcess {
  const node = new NodeProcess(["node", "--rest", "--rest-port", "0", "--genesis-fork", "bellatrix", "--seconds-per-slot", String(SECONDS_PER_SLOT), ...args]);
  nodes.push(node);
  return node;
}

async function peerId(url: string): Promise<string> {
  return (await getJson(url, "/eth/v1/node/identity")).body.data.peer_id;
}

/** The peer ids a node's REST API lists as connected. */
async function connectedPeers(url: string): Promise<string[]> {
  const {body} = await getJson(url, "/eth/v1/node/peers");
  return (body.data as Array<{peer_id: string; state: string}>).filter((p) => p.state === "connected").map((p) => p.peer_id);
}

async function blockRootAt(url: string, slot: number): Promise<string | null> {
  const {status, body} = await getJson(url, `/eth/v1/beacon/headers/${slot}`);
  return status === 200 ? body.data.root : null;
}

async function waitForHead(url: string, slot: number, what: string): Promise<void> {
  await waitFor(`${what} at slot ${slot}`, (slot + 8) * SLOT_MS + 30_000, async () => ((await chainView(url)).headSlot >= slot ? true : null));
}

/** Both nodes list each other as connected peers. */
async function expectConnected(a: {url: string; id: string}, b: {url: string; id: string}): Promise<void> {
  await waitFor("both nodes to list each other as connected", 30_000, async () =>
    (await connectedPeers(a.url)).includes(b.id) && (await connectedPeers(b.url)).includes(a.id) ? true : null
  );
}

/** The follower has the leader's head block (range sync): the same root at the leader's head slot. */
async function expectSynced(leader: string, follower: string): Promise<number> {
  return waitFor("the follower to have the leader's head", 60_000, async () => {
    const head = await chainView(leader);
    return (await blockRootAt(follower, head.headSlot)) === head.headRoot ? head.headSlot : null;
  });
}

/** For consecutive new heads of the leader, the follower has each within a slot and a half: it takes them from gossip. */
async function expectFollows(leader: string, follower: string, heads: number): Promise<void> {
  let last = (await chainView(leader)).headSlot;
  for (let i = 0; i < heads; i++) {
    const head = await waitFor("the leader's next head", 4 * SLOT_MS, async () => {
      const view = await chainView(leader);
      return view.headSlot > last ? view : null;
    });
    last = head.headSlot;
    await waitFor(`the follower to take block ${head.headRoot} of slot ${head.headSlot}`, 1.5 * SLOT_MS, async () =>
      (await blockRootAt(follower, head.headSlot)) === head.headRoot ? true : null
    );
  }
  const [a, b] = await Promise.all([chainView(leader), chainView(follower)]);
  expect(b.genesisValidatorsRoot).toBe(a.genesisValidatorsRoot);
  expect(Math.abs(a.headSlot - b.headSlot)).toBeLessThanOrEqual(1);
}

/** How often our node accepted `peer` after a status handshake: more than once means the connection dropped. */
function joins(node: NodeProcess, peer: string): number {
  return node.logs.filter((l) => l.msg === "peer joined" && l.peer === peer).length;
}

/** The failure with both sides' last output. */
function withOutput(e: unknown, node: NodeProcess | null, lodestar: LodestarProcess | null): Error {
  const ours = node ? node.logs.slice(-20).map((l) => JSON.stringify(l)).join("\n") : "";
  return new Error(`${(e as Error).message}\n--- beacon-gateway:\n${ours}\n--- Lodestar:\n${lodestar?.output() ?? ""}`);
}

/**
 * `follower` follows `source` over the wire: they are connected, on one genesis, the follower
 * reaches the source's head by range sync and then takes its heads from gossip, says it is not
 * syncing, and the connection held throughout (our node accepted Lodestar exactly once).
 */
async function expectFollowing(source: string, follower: string, us: {url: string; id: string}, them: {url: string; id: string}, node: NodeProcess): Promise<void> {
  await expectConnected(us, them);
  expect((await chainView(follower)).genesisValidatorsRoot).toBe((await chainView(source)).genesisValidatorsRoot);
  expect(await expectSynced(source, follower)).toBeGreaterThanOrEqual(HEAD_BEFORE_JOIN);
  await expectFollows(source, follower, FOLLOWED_HEADS);
  expect((await getJson(follower, "/eth/v1/node/syncing")).body.data.is_syncing).toBe(false);
  await expectConnected(us, them);
  expect((await getJson(them.url, "/eth/v1/node/peer_count")).body.data.connected).toBe("1");
  expect(joins(node, them.id)).toBe(1);
}

describe("interop with Lodestar 1.5.1 on loopback", () => {
  beforeAll(async () => {
    await installLodestarPeer();
  }, INSTALL_TIMEOUT_MS);

  afterAll(async () => {
    await Promise.all([...peers.map((p) => p.stop()), ...nodes.map((n) => n.stop("SIGKILL"))]);
    for (const dir of dirs) dir.remove();
  }, 30_000);

  it(
    "Lodestar follows our node: it connects, range-syncs to our head, takes our blocks from gossip, accepts our aggregates and stays connected",
    async () => {
      const node = startNode(["--data-dir", dataDir("leader")]);
      let lodestar: LodestarProcess | null = null;
      try {
        const url = await node.restUrl();
        const ourId = await peerId(url);
        await waitForHead(url, HEAD_BEFORE_JOIN, "our chain");

        lodestar = await startLodestar({FOLLOW: url});
        const theirId = await peerId(lodestar.restUrl);
        const us = {url, id: ourId};
        const them = {url: lodestar.restUrl, id: theirId};
        await expectFollowing(url, lodestar.restUrl, us, them, node);
        // Lodestar runs no validators here: what its pool holds came from our gossip
        const pool = (await getJson(lodestar.restUrl, "/eth/v1/beacon/pool/attestations")).body.data as unknown[];
        expect(pool.length).toBeGreaterThan(0);
      } catch (e) {
        throw withOutput(e, node, lodestar);
      } finally {
        await Promise.all([lodestar?.stop(), node?.stop("SIGKILL")]);
      }
    },
    SCENARIO_TIMEOUT_MS
  );

  it(
    "our node joins Lodestar's own chain: it connects, range-syncs to Lodestar's head, takes its blocks from gossip and stays connected",
    async () => {
      let lodestar: LodestarProcess | null = null;
      let node: NodeProcess | null = null;
      try {
        lodestar = await startLodestar({SECONDS_PER_SLOT: String(SECONDS_PER_SLOT), GENESIS_DELAY: String(LODESTAR_GENESIS_DELAY)});
        // Lodestar 1.5.1 does not serve states/genesis of its own dev chain: its head state before the first block is it
        const res = await fetch(`${lodestar.restUrl}/eth/v2/debug/beacon/states/head`, {headers: {Accept: "application/octet-stream"}});
        expect(res.status).toBe(200);
        const genesis = new Uint8Array(await res.arrayBuffer());
        // BeaconState: genesis_time (8 bytes), genesis_validators_root (32), slot (8)
        expect(Buffer.from(genesis).readBigUInt64LE(40)).toBe(0n);
        const genesisFile = join(dataDir("genesis"), "genesis.ssz");
        writeFileSync(genesisFile, genesis);
        await Promise.race([waitForHead(lodestar.restUrl, HEAD_BEFORE_JOIN, "Lodestar's chain"), lodestar.crashed()]);

        const theirId = await peerId(lodestar.restUrl);
        const direct = `/ip4/127.0.0.1/tcp/${lodestar.p2pPort}/p2p/${theirId}`;
        node = startNode(["--data-dir", dataDir("follower"), "--genesis-state", genesisFile, "--direct-peer", direct]);
        const url = await node.restUrl();
        const us = {url, id: await peerId(url)};
        const them = {url: lodestar.restUrl, id: theirId};
        await expectFollowing(lodestar.restUrl, url, us, them, node);
      } catch (e) {
        throw withOutput(e, node, lodestar);
      } finally {
        await Promise.all([lodestar?.stop(), node?.stop("SIGKILL")]);
      }
    },
    SCENARIO_TIMEOUT_MS
  );
});

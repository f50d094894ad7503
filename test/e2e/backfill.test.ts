import {afterAll, describe, expect, it} from "@jest/globals";
import {createBeaconConfig} from "@lodestar/config";
import {computeEpochAtSlot} from "@lodestar/state-transition";
import {multiaddr} from "@multiformats/multiaddr";
import {devChainConfig} from "../../src/config/chainConfig.ts";
import {createHostilePeer, NodeView, type HostilePeer} from "./hostilePeer.ts";
import {NodeProcess, chainView, getJson, restNodeArgs, tempDataDir, waitFor} from "./nodeProcess.ts";

/**
 * A node checkpoint-synced from a dev chain's finalized state backfills the blocks before its
 * anchor from its peer down to genesis (`--backfill-to-genesis`): killed after a first batch is
 * stored, it resumes from there, and then serves the history over REST and req/resp byte for byte
 * as the node that made it.
 */

const SECONDS_PER_SLOT = 1;
const fromHex = (text: string) => Uint8Array.from(Buffer.from(text.replace(/^0x/, ""), "hex"));

async function identity(url: string): Promise<{peerId: string; address: string}> {
  const {body} = await getJson(url, "/eth/v1/node/identity");
  const address = (body.data.p2p_addresses as string[]).find((a) => a.startsWith("/ip4/127.0.0.1/tcp/"));
  if (!address) throw new Error(`no loopback p2p address in ${JSON.stringify(body.data.p2p_addresses)}`);
  return {peerId: body.data.peer_id, address};
}

async function blockSsz(url: string, id: string | number): Promise<{status: number; bytes: Buffer}> {
  const res = await fetch(`${url}/eth/v2/beacon/blocks/${id}`, {headers: {accept: "application/octet-stream"}});
  return {status: res.status, bytes: Buffer.from(await res.arrayBuffer())};
}

describe("backfill after checkpoint sync", () => {
  const dirs = ["source", "checkpoint"].map((name) => tempDataDir(`backfill-${name}`));
  const nodes: NodeProcess[] = [];
  let peer: HostilePeer | null = null;
  afterAll(async () => {
    await peer?.stop();
    for (const node of nodes) await node.stop("SIGKILL");
    for (const dir of dirs) dir.remove();
  });

  it(
    "backfills to genesis, resumes after a kill where it stopped, and serves the blocks as their producer does",
    async () => {
      const source = new NodeProcess(restNodeArgs(dirs[0].dir, ["--seconds-per-slot", String(SECONDS_PER_SLOT)]));
      nodes.push(source);
      const urlA = await source.restUrl();
      const a = await identity(urlA);
      // a finalized state of epoch 2 or later: the anchor is at slot 16 or later, two batches or more above genesis
      await waitFor("finality at epoch 2", 240_000, async () => (Number((await chainView(urlA)).finalized.epoch) >= 2 ? true : null));

      const args = restNodeArgs(dirs[1].dir, [
        "--seconds-per-slot", String(SECONDS_PER_SLOT),
        "--checkpoint-sync-url", urlA,
        "--direct-peer", a.address,
        "--backfill-to-genesis",
        "--metrics", "--metrics-port", "0",
      ]);
      // killed (SIGKILL) right after the batch of slots 8..15 is stored: the one of 0..7 is still to come
      const first = new NodeProcess(args, {BEACON_GATEWAY_FAILPOINT: "backfill:after-batch@8"});
      nodes.push(first);
      const ready = await first.waitForLog((l) => l.msg === "chain ready", 60_000, "the checkpoint-synced chain");
      const anchorSlot = Number(ready.anchorSlot);
      expect(anchorSlot).toBeGreaterThanOrEqual(16);
      const killed = await Promise.race([first.exited, new Promise<null>((resolve) => setTimeout(() => resolve(null), 120_000).unref())]);
      expect(killed?.signal).toBe("SIGKILL");
      // its first batch was logged (a progress line at the first batch, then every 10 s)
      expect(first.logs.some((l) => l.msg === "backfill progress" && Number(l.lowestSlot) < anchorSlot)).toBe(true);

      const second = new NodeProcess(args);
      nodes.push(second);
      const started = await second.waitForLog((l) => l.msg === "backfill started", 60_000, "backfill to start again");
      // from the lowest block stored before the kill (one of slots 8..15), not from the anchor
      expect(started).toMatchObject({resumed: true, target: 0});
      expect(Number(started.from)).toBeGreaterThanOrEqual(8);
      expect(Number(started.from)).toBeLessThan(16);
      // (the anchor block: the checkpoint state's slot, or the last block before it when that slot is empty)
      expect(Number(started.anchorSlot)).toBeLessThanOrEqual(anchorSlot);
      expect(Number(started.anchorSlot)).toBeGreaterThan(Number(started.from));
      const done = await second.waitForLog((l) => l.msg === "backfill complete", 60_000, "backfill to finish");
      expect(done.lowestSlot).toBe(0);
      // its first batch is the one below that block: nothing above it was fetched again
      expect(second.logs.find((l) => l.msg === "backfill progress")).toMatchObject({batch: "0..7", lowestSlot: 0});
      const urlB = await second.restUrl();

      // REST: the same SSZ bytes as the producer's, for a block before the anchor
      const [ofA, ofB] = [await blockSsz(urlA, 1), await blockSsz(urlB, 1)];
      expect(ofA.status).toBe(200);
      expect(ofB.status).toBe(200);
      expect(ofB.bytes.equals(ofA.bytes)).toBe(true);
      expect((await getJson(urlB, "/eth/v1/beacon/headers/1")).status).toBe(200);

      // req/resp: blocks_by_range from slot 0 and status v2, asked by a peer of the chain
      const genesis = (await getJson(urlA, "/eth/v1/beacon/genesis")).body.data;
      const config = createBeaconConfig(devChainConfig({secondsPerSlot: SECONDS_PER_SLOT, genesisFork: "fulu", forkEpochs: {}}), fromHex(genesis.genesis_validators_root));
      const currentEpoch = () => computeEpochAtSlot(Math.max(0, Math.floor((Date.now() / 1000 - Number(genesis.genesis_time)) / SECONDS_PER_SLOT)));
      const forkDigest = () => config.forkBoundary2ForkDigest(config.getForkBoundaryAtEpoch(currentEpoch()));
      const viewA = new NodeView(urlA);
      peer = await createHostilePeer(config, currentEpoch, () => viewA.chainStatus(forkDigest()));
      const b = await identity(urlB);
      const range = {startSlot: 0, count: anchorSlot + 1, step: 1};
      const serialized = async (node: {peerId: string; address: string}) => {
        await peer!.libp2p.dial(multiaddr(node.address), {signal: AbortSignal.timeout(10_000)});
        const blocks = await peer!.reqResp.beaconBlocksByRange(node.peerId, range);
        return blocks.map((block) => Buffer.from(config.getForkTypes(block.message.slot).SignedBeaconBlock.serialize(block as never)));
      };
      const [rangeA, rangeB] = [await serialized(a), await serialized(b)];
      expect(rangeA.length).toBeGreaterThan(anchorSlot / 2);
      expect(rangeB).toEqual(rangeA);
      const statusB = await peer.reqResp.status(b.peerId, await viewA.chainStatus(forkDigest()));
      expect(statusB.earliestAvailableSlot).toBe(0);

      // the metric says where history starts
      const metricsPort = (await second.waitForLog((l) => l.msg === "metrics listening", 10_000, "metrics")).port;
      const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      expect(metrics).toMatch(/^beacon_gateway_backfill_slot 0$/m);
      expect(metrics).toMatch(/^beacon_gateway_backfill_target_slot 0$/m);
    },
    400_000
  );
});

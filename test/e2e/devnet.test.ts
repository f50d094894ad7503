// suite: alone (three validating nodes on 2-second slots must finalize together: beside another
// file's nodes on a slow machine they missed finality in fulu within 400 s)
import {describe, expect, it} from "@jest/globals";
import {devnetProcesses, saveGenesisState} from "./devnetProcesses.ts";
import {chainView, getJson, p2pAddress, restNodeArgs, waitFor} from "./nodeProcess.ts";

/**
 * A devnet of separate node processes that share only a genesis state and the network: three
 * validating nodes finalize together through every fork from phase0 to fulu, a late node
 * range-syncs across the forks and follows gossip, a node checkpoint-syncs from another's
 * REST API, and a validating node killed with SIGKILL comes back and validates again.
 */

const SECONDS_PER_SLOT = 2;
/** the devnet starts in phase0 and passes every fork: gossip topics, message ids and req/resp versions switch on the way */
const FORK_SCHEDULE = ["--genesis-fork", "phase0", "--fork-epochs", "altair=1,bellatrix=2,capella=3,deneb=4,electra=5,fulu=6"];

function nodeArgs(dir: string, extra: string[]): string[] {
  // a blob in every payload from deneb on: blob sidecars, then data columns, cross the network
  return restNodeArgs(dir, ["--seconds-per-slot", String(SECONDS_PER_SLOT), "--dev-blobs-per-block", "1", ...FORK_SCHEDULE, ...extra]);
}

async function connectedPeers(url: string): Promise<number> {
  return Number((await getJson(url, "/eth/v1/node/peer_count")).body.data.connected);
}

describe("devnet: nodes that share only a genesis state and the network", () => {
  const {dirs, start} = devnetProcesses("devnet", ["a", "b", "c", "late", "checkpoint"]);

  it(
    "three validating nodes finalize together; a late node syncs and follows; a killed node comes back",
    async () => {
      // the three nodes answer about 9 s from now on this machine, connected
      const genesisTime = Math.floor(Date.now() / 1000) + 15;
      // the first node is a supernode: it keeps every data column, so later nodes can sync them from it
      const a = start(nodeArgs(dirs[0], ["--genesis-time", String(genesisTime), "--validators", "64", "--dev-validators", "0..21", "--subscribe-all-subnets"]));
      const urlA = await a.restUrl();
      const addressA = await p2pAddress(urlA);

      // the genesis state, as any node exports it, starts the others on the same chain
      const genesisFile = await saveGenesisState(urlA, dirs[0]);

      const withGenesis = (i: number, extra: string[]) => nodeArgs(dirs[i], ["--genesis-state", genesisFile, "--direct-peer", addressA, ...extra]);
      // B checks signatures on a worker thread (a public network's default), the others on the event loop (the dev chain's)
      const bArgs = withGenesis(1, ["--dev-validators", "22..42", "--bls-threads", "1"]);
      let b = start(bArgs);
      const c = start(withGenesis(2, ["--dev-validators", "43..63"]));
      const [urlB, urlC] = [await b.restUrl(), await c.restUrl()];
      for (const url of [urlA, urlB, urlC]) {
        expect((await getJson(url, "/eth/v1/beacon/genesis")).body.data.genesis_time).toBe(String(genesisTime));
      }
      await waitFor("every node to have a peer", 60_000, async () => ((await connectedPeers(urlB)) >= 1 && (await connectedPeers(urlC)) >= 1 ? true : null));
      expect(await connectedPeers(urlA)).toBeGreaterThanOrEqual(2);

      // what the API shows of the network: the peers by id, direction and state, and the gossip mesh
      const idOf = async (url: string) => (await getJson(url, "/eth/v1/node/identity")).body.data.peer_id as string;
      const [idB, idC] = [await idOf(urlB), await idOf(urlC)];
      const peersOfA = (await getJson(urlA, "/eth/v1/node/peers?state=connected")).body;
      expect(peersOfA.meta.count).toBe(peersOfA.data.length);
      for (const id of [idB, idC]) {
        expect(peersOfA.data).toContainEqual(expect.objectContaining({peer_id: id, state: "connected", direction: "inbound"}));
      }
      expect((await getJson(urlB, `/eth/v1/node/peers/${await idOf(urlA)}`)).body.data).toMatchObject({state: "connected", direction: "outbound"});
      const legacyPeers = (await getJson(urlA, "/ext/v1/network/peers")).body.data.peers as Array<{id: string; connectionState: string}>;
      expect(legacyPeers.map((p) => p.id)).toEqual(expect.arrayContaining([idB, idC]));
      await waitFor("a gossip mesh on the block topic", 30_000, async () => {
        const mesh = (await getJson(urlA, "/ext/v1/debug/gossip/peers")).body.data.mesh as Record<string, string[]>;
        const blockTopic = Object.keys(mesh).find((t) => t.endsWith("/beacon_block/ssz_snappy"));
        return blockTopic && mesh[blockTopic].includes(idB) && mesh[blockTopic].includes(idC) ? true : null;
      });

      // no node has more than a third of the validators: justification needs all three, over the
      // network, and justifying epoch 6 (finalizing 5) means the chain went through every fork to
      // fulu together
      const firstSlotOfFork = new Map<string, number>();
      const finalized = await waitFor("fulu justified, electra finalized, on all three nodes", 400_000, async () => {
        const head = await fetch(`${urlA}/eth/v2/beacon/blocks/head`);
        const version = head.headers.get("eth-consensus-version");
        const slot = Number(((await head.json()) as {data: {message: {slot: string}}}).data.message.slot);
        if (version && !firstSlotOfFork.has(version)) firstSlotOfFork.set(version, slot);
        const views = await Promise.all([urlA, urlB, urlC].map(chainView));
        const justified = Math.min(...views.map((v) => Number(v.justified.epoch)));
        const finalized = Math.min(...views.map((v) => Number(v.finalized.epoch)));
        return justified >= 6 && finalized >= 5 ? views : null;
      });
      // each fork's first blocks came in its epoch (one fork per epoch), and the payloads chain on
      const schedule = (await getJson(urlA, "/eth/v1/config/fork_schedule")).body.data as Array<{epoch: string}>;
      expect(schedule.map((f) => f.epoch)).toEqual(["0", "1", "2", "3", "4", "5", "6"]);
      for (const [i, fork] of ["altair", "bellatrix", "capella", "deneb", "electra", "fulu"].entries()) {
        expect(Math.floor(firstSlotOfFork.get(fork)! / 8)).toBe(i + 1);
      }
      const headBlock = (await getJson(urlA, "/eth/v2/beacon/blocks/head")).body.data.message;
      expect(Number(headBlock.body.execution_payload.block_number)).toBeGreaterThan(10);
      expect((await getJson(urlA, "/eth/v1/node/identity")).body.data.metadata.custody_group_count).toBeDefined();
      // every node has the blob of a deneb block, whoever proposed it, and the supernode the blob of a fulu block
      const denebSlot = firstSlotOfFork.get("deneb")!;
      const blobOf = async (url: string, blockId: string | number) => {
        const {status, body} = await getJson(url, `/eth/v1/beacon/blobs/${blockId}`);
        return status === 200 ? (body.data as string[]) : null;
      };
      const denebBlobs = await Promise.all([urlA, urlB, urlC].map((url) => blobOf(url, denebSlot)));
      expect(denebBlobs[0]).toHaveLength(1);
      expect(new Set(denebBlobs.map((blobs) => blobs?.[0])).size).toBe(1);
      const fuluSlot = firstSlotOfFork.get("fulu")!;
      expect(await blobOf(urlA, fuluSlot)).toHaveLength(1);
      // the others keep the columns they sample (at least SAMPLES_PER_SLOT of them), not all 128
      const columnsOf = async (url: string, blockId: string | number) =>
        ((await getJson(url, `/eth/v1/debug/beacon/data_column_sidecars/${blockId}`)).body.data as Array<{index: string}>).map((c) => Number(c.index));
      expect((await columnsOf(urlA, fuluSlot)).length).toBe(128);
      for (const url of [urlB, urlC]) expect((await columnsOf(url, fuluSlot)).length).toBeGreaterThanOrEqual(8);

      const target = Math.min(...finalized.map((v) => Number(v.finalized.epoch)));
      await waitFor("the same finalized checkpoint everywhere", 60_000, async () => {
        const views = await Promise.all([urlA, urlB, urlC].map(chainView));
        const roots = new Set(views.map((v) => `${v.finalized.epoch}:${v.finalized.root}`));
        return roots.size === 1 && Number(views[0].finalized.epoch) >= target ? true : null;
      });

      // two nodes with no validators join now, side by side: one started late range-syncs from
      // genesis to the head and then follows gossip; one starts from the first node's finalized
      // state over its REST API and backfills the history before it
      const late = start(nodeArgs(dirs[3], ["--genesis-state", genesisFile, "--direct-peer", addressA, "--dev-validators", "none"]));
      const cp = start(nodeArgs(dirs[4], ["--checkpoint-sync-url", urlA, "--direct-peer", addressA, "--dev-validators", "none"]));
      const headerRoot = async (url: string, slot: number) => (await getJson(url, `/eth/v1/beacon/headers/${slot}`)).body?.data?.root ?? null;
      const lateNode = async () => {
        const urlLate = await late.restUrl();
        await late.waitForLog((l) => l.msg === "range sync started", 60_000, "range sync to start");
        await waitFor("the late node to reach the head", 120_000, async () => {
          const [ours, theirs] = await Promise.all([chainView(urlLate), chainView(urlA)]);
          return ours.headSlot >= theirs.headSlot - 1 ? true : null;
        });
        const syncedAt = (await chainView(urlLate)).headSlot;
        await waitFor("the late node to follow gossip", 60_000, async () => ((await chainView(urlLate)).headSlot >= syncedAt + 3 ? true : null));
        expect((await getJson(urlLate, "/eth/v1/node/syncing")).body.data.is_syncing).toBe(false);
        // range sync brought the sidecars too: the deneb blob, and the fulu columns it samples
        expect(await blobOf(urlLate, denebSlot)).toEqual(denebBlobs[0]);
        expect((await columnsOf(urlLate, fuluSlot)).length).toBeGreaterThanOrEqual(8);
      };
      const checkpointNode = async () => {
        const ready = await cp.waitForLog((l) => l.msg === "chain ready", 120_000, "the checkpoint-synced chain");
        expect(Number(ready.anchorSlot)).toBeGreaterThan(0);
        const urlCp = await cp.restUrl();
        await waitFor("the checkpoint-synced node to reach the head", 120_000, async () => {
          const [ours, theirs] = await Promise.all([chainView(urlCp), chainView(urlA)]);
          return ours.headSlot >= theirs.headSlot - 1 && ours.finalized.root === theirs.finalized.root ? true : null;
        });
        // history before its anchor is backfilled from its peer (all of it is within MIN_EPOCHS_FOR_BLOCK_REQUESTS),
        // the blob sidecars of the deneb blocks with it
        await cp.waitForLog((l) => l.msg === "backfill complete", 120_000, "the checkpoint-synced node's backfill");
        for (const slot of [1, denebSlot]) expect(await headerRoot(urlCp, slot)).toBe(await headerRoot(urlA, slot));
        expect(await headerRoot(urlCp, denebSlot)).not.toBeNull();
        expect(await blobOf(urlCp, denebSlot)).toEqual(denebBlobs[0]);
      };
      await Promise.all([lateNode(), checkpointNode()]);

      // a validating node killed outright comes back, resyncs, and the chain keeps finalizing with it
      const custodyOf = async (url: string) => Number((await getJson(url, "/eth/v1/node/identity")).body.data.metadata.custody_group_count);
      // its validators raised its custody above the minimum (fulu validator.md)
      const custodyBefore = await custodyOf(urlB);
      expect(custodyBefore).toBeGreaterThan(4);
      await b.stop("SIGKILL");
      const finalizedBefore = Number((await chainView(urlA)).finalized.epoch);
      b = start(bArgs);
      const urlB2 = await b.restUrl();
      // the highest custody group count persists across restarts: it is there as soon as the node answers
      expect(await custodyOf(urlB2)).toBe(custodyBefore);
      await waitFor("the restarted node to rejoin the head", 120_000, async () => {
        const [ours, theirs] = await Promise.all([chainView(urlB2), chainView(urlA)]);
        return ours.headSlot >= theirs.headSlot - 1 ? true : null;
      });
      await waitFor("finality to move on after the restart", 200_000, async () => {
        const v = await chainView(urlB2);
        return Number(v.finalized.epoch) > finalizedBefore ? true : null;
      });
      // the restarted node's validators sign again: it proposes blocks after coming back
      await b.waitForLog((l) => l.msg === "Published block", 120_000, "a block proposed by the restarted node");
    },
    900_000
  );
});

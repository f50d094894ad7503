import {afterAll, describe, expect, it} from "@jest/globals";
import {SignableENR} from "@chainsafe/enr";
import {privateKeyFromRaw} from "@libp2p/crypto/keys";
import {peerIdFromPrivateKey} from "@libp2p/peer-id";
import {createHash} from "node:crypto";
import {mkdirSync, writeFileSync} from "node:fs";
import {join} from "node:path";
import {samplingColumns} from "../../src/network/custody.ts";
import {NodeProcess, getJson, tempDataDir, waitFor} from "./nodeProcess.ts";

/**
 * Data columns once the supernode is gone (fulu): a semi-supernode rebuilds each block's other
 * half of the columns and serves them. Separate processes on one chain, wired so that some of a
 * node's columns can come from nowhere but the rebuilt ones:
 *
 *   P (proposer, every validator, a blob a block) ── S (supernode) ── X
 *   P ── H (semi-supernode: 64 of the 128 columns) ── X
 *
 * X samples 8 columns, 5 of them outside H's 64 (fixed node keys). While S lives, X gets them
 * through S. Once S is killed, X's only peer is H, which never receives those columns (it joins
 * only its own columns' subnets): each later block imports on X with all its columns only because
 * H rebuilt the other half from its own and serves it.
 */

const SECONDS_PER_SLOT = 3;
const CUSTODY = {NUMBER_OF_CUSTODY_GROUPS: 128, SAMPLES_PER_SLOT: 8, CUSTODY_REQUIREMENT: 4};
const NAMES = ["proposer", "super", "half", "leaf"] as const;
type Name = (typeof NAMES)[number];
const keyOf = (name: Name) => createHash("sha256").update(`beacon-gateway data column e2e: ${name}`).digest();
/** the columns a node samples by its key and custody group count (fulu das-core.md) */
const columnsOf = (name: Name, cgc: number) => samplingColumns(CUSTODY, BigInt("0x" + SignableENR.createV4(keyOf(name)).nodeId), cgc);
/**
 * Fixed keys and ports, so that every process starts at once, each dialing those it names (direct
 * peers are redialed until they answer). The ports are below the system's ephemeral range, where
 * the other tests' port 0 never lands.
 */
const PORT_BASE = 20_000 + 10 * Math.floor(Math.random() * 1000);
const portOf = (name: Name) => PORT_BASE + NAMES.indexOf(name);
const addressOf = (name: Name) => `/ip4/127.0.0.1/tcp/${portOf(name)}/p2p/${peerIdFromPrivateKey(privateKeyFromRaw(keyOf(name)))}`;

describe("data columns once the supernode is gone", () => {
  const data = tempDataDir("columns");
  const procs: NodeProcess[] = [];
  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop("SIGKILL")));
    data.remove();
  });

  it(
    "a semi-supernode rebuilds the columns it does not keep, and a node that needs them still imports every block",
    async () => {
      // a node starts in 3-4 s on an idle machine, in 20 s and more on a loaded one; one that starts
      // more than 8 slots after genesis stays out of gossip until it has range-synced (peers re-send
      // their status only every 5 minutes), so genesis leaves them all the time to start
      const genesisTime = Math.floor(Date.now() / 1000) + 30;
      const start = (name: Name, extra: string[]) => {
        const dir = join(data.dir, name);
        mkdirSync(join(dir, "network"), {recursive: true});
        writeFileSync(join(dir, "network", "node.key"), keyOf(name).toString("hex") + "\n", {mode: 0o600});
        const proc = new NodeProcess([
          "node", "--rest", "--rest-port", "0", "--data-dir", dir, "--listen-address", "127.0.0.1", "--tcp-port", String(portOf(name)), "--no-quic", "--no-discovery",
          "--seconds-per-slot", String(SECONDS_PER_SLOT), "--genesis-time", String(genesisTime), "--validators", "32", ...extra,
        ]);
        procs.push(proc);
        return proc;
      };
      const half = columnsOf("half", 64);
      const leaf = columnsOf("leaf", 4);
      // the wiring's premise: X samples columns that H does not keep
      expect(leaf.filter((c) => !half.includes(c)).length).toBeGreaterThanOrEqual(3);

      const p = start("proposer", ["--dev-blobs-per-block", "1", "--direct-peer", addressOf("super"), "--direct-peer", addressOf("half")]);
      const s = start("super", ["--dev-validators", "none", "--subscribe-all-subnets", "--direct-peer", addressOf("leaf")]);
      const h = start("half", ["--dev-validators", "none", "--semi-supernode", "--direct-peer", addressOf("leaf")]);
      const x = start("leaf", ["--dev-validators", "none"]);
      const [urlP, urlH, urlX] = [await p.restUrl(120_000), await h.restUrl(120_000), await x.restUrl(120_000)];
      await s.restUrl(120_000);
      expect((await getJson(urlH, "/eth/v1/node/identity")).body.data.metadata.custody_group_count).toBe("64");

      const headSlot = async (url: string) => Number((await getJson(url, "/eth/v1/beacon/headers/head")).body.data.header.message.slot);
      const columnsAt = async (url: string, root: string) => {
        const {status, body} = await getJson(url, `/eth/v1/debug/beacon/data_column_sidecars/${root}`);
        return status === 200 ? (body.data as Array<{index: string}>).map((c) => Number(c.index)).sort((a, b) => a - b) : [];
      };
      /** P's blocks in (from, to], with their roots */
      const blocksOfP = async (from: number, to: number) => {
        const blocks: Array<{slot: number; root: string}> = [];
        for (let slot = from + 1; slot <= to; slot++) {
          const {status, body} = await getJson(urlP, `/eth/v1/beacon/headers/${slot}`);
          if (status === 200) blocks.push({slot, root: body.data.root});
        }
        return blocks;
      };

      await waitFor("X and H to follow P", 90_000, async () => {
        const [ps, hs, xs] = await Promise.all([headSlot(urlP), headSlot(urlH), headSlot(urlX)]);
        return ps >= 2 && hs >= ps - 1 && xs >= ps - 1 ? true : null;
      });

      // the supernode dies: X's columns outside H's half are now nowhere but in what H rebuilt
      await s.stop("SIGKILL");
      const killedAt = await headSlot(urlP);
      await waitFor("three more blocks on X", 60_000, async () => ((await blocksOfP(killedAt + 1, await headSlot(urlX))).length >= 3 ? true : null));
      for (const {slot, root} of await blocksOfP(killedAt + 1, await headSlot(urlX))) {
        // X imported P's block there and keeps every column it samples: its data was available
        expect({slot, root: (await getJson(urlX, `/eth/v1/beacon/headers/${slot}`)).body.data?.root}).toEqual({slot, root});
        expect({slot, columns: await columnsAt(urlX, root)}).toEqual({slot, columns: leaf});
        // H keeps its own half of each block, not what it rebuilt
        expect({slot, columns: await columnsAt(urlH, root)}).toEqual({slot, columns: half});
      }
      // and gives a block's blobs over REST from its half, as P does from the blobs it built
      const [{root}] = await blocksOfP(killedAt + 1, await headSlot(urlX));
      const blobsOf = async (url: string) => (await getJson(url, `/eth/v1/beacon/blobs/${root}`)).body.data as string[];
      expect(await blobsOf(urlH)).toEqual(await blobsOf(urlP));
      expect(await blobsOf(urlH)).toHaveLength(1);
    },
    240_000
  );
});

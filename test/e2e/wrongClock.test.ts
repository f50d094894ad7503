import {describe, expect, it} from "@jest/globals";
import {mkdirSync, writeFileSync} from "node:fs";
import {createServer, type AddressInfo} from "node:net";
import {join} from "node:path";
import {generateKeyPair} from "@libp2p/crypto/keys";
import {peerIdFromPrivateKey} from "@libp2p/peer-id";
import {devnetProcesses} from "./devnetProcesses.ts";
import {chainView, getJson, restNodeArgs, waitFor, type LogLine} from "./nodeProcess.ts";

/**
 * A devnet of three nodes on 1-second slots where one node's clock runs 3 seconds behind
 * (BEACON_GATEWAY_CLOCK_OFFSET_MS, for tests): it finds the offset from its peers' gossip (their
 * messages arrive before their slots start by its clock, which only a clock behind explains) and
 * says so with the measured value, its validators stop signing, the other two go on, and
 * nothing slashable is signed. (A clock ahead reads like a slow network: unit-tested in
 * test/unit/network/clockWatch.test.ts.)
 */

const OFFSET_MS = -3000;
const CLOCK_OFF = /^the clock is off from the network's/;

/** Writes a node key into `dataDir` (as the node would make one) and gives its peer id. */
async function presetIdentity(dataDir: string): Promise<string> {
  const key = await generateKeyPair("secp256k1");
  mkdirSync(join(dataDir, "network"), {recursive: true, mode: 0o700});
  writeFileSync(join(dataDir, "network", "node.key"), Buffer.from(key.raw).toString("hex") + "\n", {mode: 0o600});
  return peerIdFromPrivateKey(key).toString();
}

/** A TCP port free on loopback now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const {port} = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

describe("a wrong clock in one node of a devnet", () => {
  const {dirs, start} = devnetProcesses("clock", ["a", "b", "off"]);

  it(
    "the node with the wrong clock measures it, its validators skip, the others go on; nothing slashable",
    async () => {
      // the interop genesis is the same for every node given the same time and validator count, and
      // each node's identity and port are chosen here: the three start at once, the off node
      // dialing both others
      const genesisTime = Math.floor(Date.now() / 1000) + 12;
      const common = ["--seconds-per-slot", "1", "--genesis-fork", "phase0", "--genesis-time", String(genesisTime), "--validators", "64"];
      const [idA, idB] = [await presetIdentity(dirs[0]), await presetIdentity(dirs[1])];
      const [portA, portB] = [await freePort(), await freePort()];
      const listen = (port: number) => ["--listen-address", "127.0.0.1", "--tcp-port", String(port), "--no-quic", "--no-discovery"];
      const addressOf = (port: number, id: string) => `/ip4/127.0.0.1/tcp/${port}/p2p/${id}`;
      const a = start(restNodeArgs(dirs[0], [...common, ...listen(portA), "--dev-validators", "0..27"]));
      const b = start(restNodeArgs(dirs[1], [...common, ...listen(portB), "--direct-peer", addressOf(portA, idA), "--dev-validators", "28..55"]));
      const offArgs = [...common, "--direct-peer", addressOf(portA, idA), "--direct-peer", addressOf(portB, idB), "--dev-validators", "56..63", "--metrics", "--metrics-port", "0"];
      const off = start(restNodeArgs(dirs[2], offArgs), {BEACON_GATEWAY_CLOCK_OFFSET_MS: String(OFFSET_MS)});
      const [urlA, urlB, urlOff] = [await a.restUrl(), await b.restUrl(), await off.restUrl()];

      // the offset is found from the peers' blocks and attestations, and said once with its value
      const warning = await off.waitForLog((l) => CLOCK_OFF.test(l.msg), 30_000, "the clock-off warning");
      expect(warning.level).toBe(40);
      // the offset plus the network's delay (seconds on a loaded machine), past the 500 ms tolerance
      expect(warning.offsetMs as number).toBeGreaterThanOrEqual(OFFSET_MS - 100);
      expect(warning.offsetMs as number).toBeLessThan(-500);
      expect(warning.peers).toBeGreaterThanOrEqual(1);
      const skipped = await off.waitForLog((l) => /^Validator duties skipped/.test(l.msg), 10_000, "the validators to skip");
      const metricsPort = (await off.waitForLog((l) => l.msg === "metrics listening", 1000, "metrics")).port;
      const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      const gauge = Number(/^beacon_gateway_clock_offset_seconds ([-\d.e]+)$/m.exec(metrics)?.[1]);
      expect(gauge).toBeLessThan(-0.5);

      // the other two go on without it
      const before = await chainView(urlA);
      await waitFor("the head to move on A and B", 10_000, async () => {
        const views = await Promise.all([urlA, urlB].map(chainView));
        return views.every((v) => v.headSlot >= before.headSlot + 3) ? true : null;
      });
      await new Promise((r) => setTimeout(r, 2000));

      // the off node published nothing for the slots after it skipped
      const published = (l: LogLine) => /^Published (block|attestations|aggregates)/.test(l.msg);
      expect(off.logs.filter((l) => published(l) && (l.slot as number) > (skipped.slot as number))).toEqual([]);
      expect(off.logs.filter((l) => CLOCK_OFF.test(l.msg))).toHaveLength(1);
      // the honest nodes' clocks are right, and they say nothing
      for (const node of [a, b]) expect(node.logs.filter((l) => CLOCK_OFF.test(l.msg))).toEqual([]);
      // nothing slashable: no slashing seen by anyone, and the off node's validators' blocks each at a slot of their own
      for (const url of [urlA, urlB, urlOff]) {
        expect((await getJson(url, "/eth/v2/beacon/pool/attester_slashings")).body.data).toEqual([]);
        expect((await getJson(url, "/eth/v1/beacon/pool/proposer_slashings")).body.data).toEqual([]);
      }
      const offBlocks = off.logs.filter((l) => l.msg === "Published block").map((l) => l.slot);
      expect(new Set(offBlocks).size).toBe(offBlocks.length);
    },
    120_000
  );
});

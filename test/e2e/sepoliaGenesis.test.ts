import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {ENR} from "@chainsafe/enr";
import {spawnSync} from "node:child_process";
import {join} from "node:path";
import {fileURLToPath} from "node:url";
import {type ForkSchedule, digestBoundaries, forkDigestAt, forkVersionAt} from "../forkDigest.ts";
import {NodeProcess, getJson, restNodeArgs, tempDataDir} from "./nodeProcess.ts";

/**
 * `--network sepolia --genesis-state genesis.ssz`, Sepolia's real genesis state (a fixture copy):
 * the node answers Sepolia's genesis, fork schedule and, in its ENR, the fork id of Sepolia's
 * fork at today's wall clock, all checked against Sepolia's published values (eth-clients/sepolia
 * config.yaml) and the spec's compute_fork_digest, not the node's own configuration. The node
 * runs the mainnet preset in its own process (the public networks fix it), with `beacon-gateway
 * mock-engine` as its execution engine.
 *
 * A second node runs with discovery on, in a network namespace whose only interface is loopback:
 * it starts discv5 from the built-in bootnodes, which it cannot reach (nothing leaves the
 * machine), and says so once.
 */

const GENESIS = fileURLToPath(new URL("../fixtures/sepolia/genesis.ssz", import.meta.url));
const GENESIS_TIME = 1655733600;
const GENESIS_VALIDATORS_ROOT = "0xd8ea171f3c94aea21ebc42a1ed61052acf3f9209c00e4efbaaddac09ed9b8078";
const FAR_FUTURE_EPOCH = 2n ** 64n - 1n;
const v = (hex: string) => Uint8Array.from(Buffer.from(hex, "hex"));
/** Sepolia's forks and blob schedule, as eth-clients/sepolia publishes them (metadata/config.yaml) */
const SEPOLIA: ForkSchedule = {
  forks: [
    [v("90000069"), 0],
    [v("90000070"), 50],
    [v("90000071"), 100],
    [v("90000072"), 56832],
    [v("90000073"), 132608],
    [v("90000074"), 222464],
    [v("90000075"), 272640],
  ],
  FULU_FORK_EPOCH: 272640,
  ELECTRA_FORK_EPOCH: 222464,
  MAX_BLOBS_PER_BLOCK_ELECTRA: 9,
  BLOB_SCHEDULE: [
    {EPOCH: 274176, MAX_BLOBS_PER_BLOCK: 15},
    {EPOCH: 275712, MAX_BLOBS_PER_BLOCK: 21},
  ],
};
const hex = (bytes: Uint8Array) => "0x" + Buffer.from(bytes).toString("hex");

describe("Sepolia from its real genesis state", () => {
  const data = tempDataDir("sepolia");
  const jwtFile = join(data.dir, "jwt.hex");
  const processes: NodeProcess[] = [];
  let node: NodeProcess;
  let isolated: NodeProcess;

  // both nodes start at once: each takes a while to load the state and the KZG setup
  beforeAll(async () => {
    // the namespace is what keeps the bootnodes' addresses out of reach: without it, no discovery test
    const probe = spawnSync("unshare", ["--net", "--", "sh", "-c", "ip link set lo up"], {encoding: "utf8"});
    expect({status: probe.status, stderr: probe.stderr}).toEqual({status: 0, stderr: ""});
    isolated = new NodeProcess(
      restNodeArgs(join(data.dir, "isolated"), [
        "--network", "sepolia", "--genesis-state", GENESIS,
        // no engine in the namespace: the node starts all the same
        "--execution-endpoint", "http://127.0.0.1:1", "--jwt-secret", jwtFile,
        "--listen-address", "127.0.0.1", "--tcp-port", "0", "--udp-port", "9000",
      ]),
      {},
      {isolated: true}
    );
    processes.push(isolated);
    const engine = new NodeProcess(["mock-engine", "--port", "0", "--jwt-secret", jwtFile]);
    processes.push(engine);
    const enginePort = (await engine.waitForLog((l) => l.msg === "mock engine listening", 30_000, "mock engine to listen")).port;
    node = new NodeProcess(
      restNodeArgs(join(data.dir, "node"), ["--network", "sepolia", "--genesis-state", GENESIS, "--execution-endpoint", `http://127.0.0.1:${enginePort}`, "--jwt-secret", jwtFile])
    );
    processes.push(node);
  }, 60_000);

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    data.remove();
  }, 60_000);

  it(
    "answers Sepolia's genesis, fork schedule and today's fork id",
    async () => {
      const url = await node.restUrl(90_000);

      const genesis = (await getJson(url, "/eth/v1/beacon/genesis")).body.data;
      expect(genesis).toEqual({genesis_time: String(GENESIS_TIME), genesis_validators_root: GENESIS_VALIDATORS_ROOT, genesis_fork_version: "0x90000069"});

      const schedule = (await getJson(url, "/eth/v1/config/fork_schedule")).body.data;
      expect(schedule).toEqual(
        SEPOLIA.forks.map(([version, epoch], i) => ({previous_version: hex(SEPOLIA.forks[Math.max(0, i - 1)][0]), current_version: hex(version), epoch: String(epoch)}))
      );

      const identity = (await getJson(url, "/eth/v1/node/identity")).body.data;
      const epoch = Math.floor((Date.now() / 1000 - GENESIS_TIME) / 12 / 32);
      const enr = ENR.decodeTxt(identity.enr);
      // ENRForkID's SSZ bytes: fork_digest (4), next_fork_version (4), next_fork_epoch (uint64 little endian)
      const eth2 = Buffer.from(enr.kvs.get("eth2")!);
      expect(eth2.length).toBe(16);
      const forkId = {forkDigest: eth2.subarray(0, 4), nextForkVersion: eth2.subarray(4, 8), nextForkEpoch: eth2.readBigUInt64LE(8)};
      const root = v(GENESIS_VALIDATORS_ROOT.slice(2));
      expect(hex(forkId.forkDigest)).toBe(hex(forkDigestAt(SEPOLIA, root, epoch)));
      // fulu p2p: the next fork of either kind, its version only changing at a regular fork; none: the current version, FAR_FUTURE_EPOCH
      const next = digestBoundaries(SEPOLIA).find((e) => e > epoch);
      expect(hex(forkId.nextForkVersion)).toBe(hex(forkVersionAt(SEPOLIA, next ?? epoch)));
      expect(forkId.nextForkEpoch).toBe(next === undefined ? FAR_FUTURE_EPOCH : BigInt(next));
      expect(hex(enr.kvs.get("nfd")!)).toBe(next === undefined ? "0x00000000" : hex(forkDigestAt(SEPOLIA, root, next)));
      expect(node.logs.filter((l) => l.level >= 50)).toEqual([]);
    },
    120_000
  );

  it(
    "starts discovery from the built-in bootnodes and, when none can be reached, says so once",
    async () => {
      const started = await isolated.waitForLog((l) => l.msg === "discv5 started", 90_000, "discv5 to start");
      // Sepolia's nine bootstrap_nodes.yaml records (src/config/bootnodes/sepolia.yaml)
      expect(started.bootnodes).toBe(9);
      const silent = await isolated.waitForLog((l) => l.msg.includes("bootnodes answered"), 60_000, "the note that no bootnode answers");
      expect(silent).toMatchObject({level: 40, bootnodes: 9});
      expect(silent.msg).toContain("none of the 9 bootnodes answered");
      // the searches after it back off, at debug level (test/unit/network/discoveryBackoff.test.ts); nothing else was said above it
      const network = isolated.logs.filter((l) => l.topic === "network" && l.level >= 40);
      expect(network).toEqual([silent]);
      expect(isolated.logs.filter((l) => l.level >= 50)).toEqual([]);
    },
    150_000
  );
});

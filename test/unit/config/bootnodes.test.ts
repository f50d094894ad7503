import {describe, expect, it} from "@jest/globals";
import {ENR} from "@chainsafe/enr";
import {createBeaconConfig, createChainForkConfig, type ChainConfig} from "@lodestar/config";
import {networksChainConfig} from "@lodestar/config/networks";
import {ACTIVE_PRESET} from "@lodestar/params";
import {ssz} from "@lodestar/types";
import {type ForkSchedule, digestBoundaries, forkDataRoot, forkDigestAt, forkVersionAt} from "../../forkDigest.ts";
import {NETWORKS_WITH_BOOTNODES, bootnodesOf, builtInBootnodes} from "../../../src/config/bootnodes.ts";

/**
 * The built-in bootnodes: every record decodes with @chainsafe/enr (which verifies its secp256k1
 * signature: a changed byte fails), and its `eth2` entry names a fork digest of its network,
 * computed here as the consensus specs v1.6.1 do (phase0 `compute_fork_data_root`, fulu's
 * `compute_fork_digest` xored with the blob parameters' hash) from the genesis validators root
 * the network publishes and its fork versions and epochs. Another network's list fails the same check.
 */

type Net = (typeof NETWORKS_WITH_BOOTNODES)[number];

/** As each network publishes it (eth-clients/<net>: genesis_validators_root.txt, the genesis state). */
const GENESIS_VALIDATORS_ROOT: Record<Net, string> = {
  mainnet: "0x4b363db94e286120d76eb905340fdd4e54bfe9f06bf33ff6cf5ad27f511bfe95",
  sepolia: "0xd8ea171f3c94aea21ebc42a1ed61052acf3f9209c00e4efbaaddac09ed9b8078",
  hoodi: "0x212f13fc4df078b6cb7db228f1c8307566dcecf900867401a92023d7ba99cb5f",
};

/**
 * Records with no `eth2` entry (the p2p spec makes it a SHOULD; Teku's and Lodestar's bootnodes
 * leave it out): their fork cannot be checked, only their signature. Counted, so that a list
 * whose records lost their entries does not pass unchecked.
 */
const WITHOUT_ETH2: Record<Net, number> = {mainnet: 4, sepolia: 3, hoodi: 1};

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");

function scheduleOf(net: Net): ForkSchedule {
  const c = networksChainConfig[net] as ChainConfig;
  expect(Number.isFinite(c.FULU_FORK_EPOCH)).toBe(true);
  return {
    forks: [
      [c.GENESIS_FORK_VERSION, 0],
      [c.ALTAIR_FORK_VERSION, c.ALTAIR_FORK_EPOCH],
      [c.BELLATRIX_FORK_VERSION, c.BELLATRIX_FORK_EPOCH],
      [c.CAPELLA_FORK_VERSION, c.CAPELLA_FORK_EPOCH],
      [c.DENEB_FORK_VERSION, c.DENEB_FORK_EPOCH],
      [c.ELECTRA_FORK_VERSION, c.ELECTRA_FORK_EPOCH],
      [c.FULU_FORK_VERSION, c.FULU_FORK_EPOCH],
    ],
    FULU_FORK_EPOCH: c.FULU_FORK_EPOCH,
    ELECTRA_FORK_EPOCH: c.ELECTRA_FORK_EPOCH,
    MAX_BLOBS_PER_BLOCK_ELECTRA: c.MAX_BLOBS_PER_BLOCK_ELECTRA,
    BLOB_SCHEDULE: c.BLOB_SCHEDULE,
  };
}

/** The fork digests a node of `net` can advertise over its history, each with the fork version it stands for. */
function digestFamily(net: Net): Map<string, string> {
  const schedule = scheduleOf(net);
  const c = networksChainConfig[net] as ChainConfig;
  const root = Buffer.from(GENESIS_VALIDATORS_ROOT[net].slice(2), "hex");
  const family = new Map<string, string>();
  for (const epoch of digestBoundaries(schedule)) family.set(hex(forkDigestAt(schedule, root, epoch)), hex(forkVersionAt(schedule, epoch)));
  // a network whose later forks all start at genesis (hoodi) never ran its genesis fork version, but
  // some of its bootnodes advertise that version's digest
  family.set(hex(forkDataRoot(c.GENESIS_FORK_VERSION, root).subarray(0, 4)), hex(c.GENESIS_FORK_VERSION));
  // before genesis there is no validators root: Prysm's bootnodes still advertise the digest of the
  // genesis fork version with a zero root, which only a network of that genesis version has
  family.set(hex(forkDataRoot(c.GENESIS_FORK_VERSION, new Uint8Array(32)).subarray(0, 4)), hex(c.GENESIS_FORK_VERSION));
  return family;
}

/** What is wrong with `enrs` as bootnodes of `net` ([] when nothing), and how many records carry no `eth2`. */
function checkBootnodes(enrs: string[], net: Net): {problems: string[]; withoutEth2: number} {
  const family = digestFamily(net);
  const c = networksChainConfig[net] as ChainConfig;
  const versions = new Set(
    [c.GENESIS_FORK_VERSION, c.ALTAIR_FORK_VERSION, c.BELLATRIX_FORK_VERSION, c.CAPELLA_FORK_VERSION, c.DENEB_FORK_VERSION, c.ELECTRA_FORK_VERSION, c.FULU_FORK_VERSION].map(hex)
  );
  const problems: string[] = [];
  let withoutEth2 = 0;
  for (const text of enrs) {
    const enr = ENR.decodeTxt(text);
    const eth2 = enr.kvs.get("eth2");
    if (eth2 === undefined) {
      withoutEth2++;
      continue;
    }
    const forkId = ssz.phase0.ENRForkID.deserialize(eth2);
    if (!family.has(hex(forkId.forkDigest))) problems.push(`${text.slice(0, 24)}…: fork digest ${hex(forkId.forkDigest)} is not ${net}'s`);
    if (!versions.has(hex(forkId.nextForkVersion))) problems.push(`${text.slice(0, 24)}…: next fork version ${hex(forkId.nextForkVersion)} is not ${net}'s`);
  }
  return {problems, withoutEth2};
}

describe("built-in bootnodes", () => {
  it.each(NETWORKS_WITH_BOOTNODES)("%s: every record is signed by its key and of the network's fork digests", (net) => {
    const enrs = builtInBootnodes(net);
    expect(enrs.length).toBeGreaterThanOrEqual(5);
    expect(new Set(enrs).size).toBe(enrs.length);
    for (const text of enrs) {
      const enr = ENR.decodeTxt(text); // throws "Unable to verify enr signature" on a bad one
      expect(enr.id).toBe("v4");
      expect(enr.udp ?? enr.udp6).toBeGreaterThan(0); // reachable for discv5
    }
    const {problems, withoutEth2} = checkBootnodes(enrs, net);
    expect(problems).toEqual([]);
    expect(withoutEth2).toBe(WITHOUT_ETH2[net]);
    expect(enrs.length - withoutEth2).toBeGreaterThan(0);
  });

  it("a record with a changed signature does not decode", () => {
    const [text] = builtInBootnodes("sepolia");
    const enr = ENR.decodeTxt(text);
    const forged = new ENR(enr.kvs, enr.seq, enr.signature.map((b, i) => (i === 10 ? b ^ 1 : b)));
    expect(() => ENR.decodeTxt(forged.encodeTxt())).toThrow(/verify/);
  });

  it.each(NETWORKS_WITH_BOOTNODES.flatMap((list) => NETWORKS_WITH_BOOTNODES.filter((net) => net !== list).map((net) => [list, net] as const)))(
    "%s's list is not accepted as %s's",
    (list, net) => {
      const {problems, withoutEth2} = checkBootnodes(builtInBootnodes(list), net);
      // every record that names a fork names one of another network
      expect(problems.filter((p) => p.includes("fork digest")).length).toBe(builtInBootnodes(list).length - withoutEth2);
    }
  );

  it("the digests computed here are those the node computes for the network's fork boundaries (@lodestar/config)", () => {
    for (const net of NETWORKS_WITH_BOOTNODES) {
      // the digests do not depend on the preset (jest runs the minimal one; lodestar refuses a config of another)
      const chainConfig = {...networksChainConfig[net], PRESET_BASE: ACTIVE_PRESET} as ChainConfig;
      const config = createBeaconConfig(createChainForkConfig(chainConfig), Buffer.from(GENESIS_VALIDATORS_ROOT[net].slice(2), "hex"));
      const nodes = config.forkBoundariesAscendingEpochOrder.filter((b) => Number.isFinite(b.epoch)).map((b) => hex(config.forkBoundary2ForkDigest(b)));
      const family = digestFamily(net);
      for (const digest of nodes) expect(family.has(digest)).toBe(true);
      // every fork boundary but those sharing an epoch (hoodi's genesis forks), and the two genesis-version extras
      expect(nodes.length).toBeGreaterThanOrEqual(family.size - 2);
    }
  });

  it("--bootnodes adds to the built-in records; networks without a list get only those given", () => {
    const extra = "enr:-extra";
    const sepolia = builtInBootnodes("sepolia");
    expect(bootnodesOf("sepolia", [extra, sepolia[0]])).toEqual([...sepolia, extra]);
    expect(bootnodesOf("dev", [extra])).toEqual([extra]);
    expect(bootnodesOf("holesky", [])).toEqual([]);
    expect(bootnodesOf("custom", [extra])).toEqual([extra]);
  });
});

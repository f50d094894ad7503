import {describe, expect, it} from "@jest/globals";
import {createBeaconConfig, createChainForkConfig, type ChainConfig} from "@lodestar/config";
import {ForkName} from "@lodestar/params";
import {ssz} from "@lodestar/types";
import {createHash} from "node:crypto";
import {devChainConfig} from "../../../../src/config/chainConfig.ts";
import {activeBoundariesAt, gossipSszType, parseTopic, stringifyTopic, topicsForBoundary} from "../../../../src/network/gossip/topics.ts";

const GVR = new Uint8Array(32).fill(0x5a);
/** every fork one epoch apart, and a blob-parameters-only fork at epoch 10 */
const chainConfig = createChainForkConfig({
  ...(devChainConfig({secondsPerSlot: 2, genesisFork: "phase0", forkEpochs: {altair: 1, bellatrix: 2, capella: 3, deneb: 4, electra: 5, fulu: 6}}) as unknown as ChainConfig),
  BLOB_SCHEDULE: [{EPOCH: 10, MAX_BLOBS_PER_BLOCK: 12}],
});
const config = createBeaconConfig(chainConfig, GVR);

const sha256 = (...parts: Uint8Array[]) => {
  const h = createHash("sha256");
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
};
const u64 = (n: number) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(n));
  return b;
};

/** compute_fork_digest by hand: ForkData is two chunks (the version zero-padded, the root); fulu xors in the blob parameters. */
function forkDigest(version: Uint8Array, blobParams?: {epoch: number; max: number}): string {
  const versionChunk = new Uint8Array(32);
  versionChunk.set(version);
  const base = sha256(versionChunk, GVR);
  if (blobParams) {
    const mask = sha256(u64(blobParams.epoch), u64(blobParams.max));
    for (let i = 0; i < 4; i++) base[i] ^= mask[i];
  }
  return Buffer.from(base.subarray(0, 4)).toString("hex");
}

const boundary = (epoch: number) => config.getForkBoundaryAtEpoch(epoch);

describe("gossip topic names", () => {
  it("carry the spec's fork digest of each boundary, lowercase hex without 0x", () => {
    const phase0 = forkDigest(chainConfig.GENESIS_FORK_VERSION);
    expect(stringifyTopic(config, {type: "beacon_block", boundary: boundary(0)})).toBe(`/eth2/${phase0}/beacon_block/ssz_snappy`);
    expect(stringifyTopic(config, {type: "beacon_aggregate_and_proof", boundary: boundary(1)})).toBe(
      `/eth2/${forkDigest(chainConfig.ALTAIR_FORK_VERSION)}/beacon_aggregate_and_proof/ssz_snappy`
    );
    expect(stringifyTopic(config, {type: "beacon_attestation", subnet: 17, boundary: boundary(3)})).toBe(
      `/eth2/${forkDigest(chainConfig.CAPELLA_FORK_VERSION)}/beacon_attestation_17/ssz_snappy`
    );
    // fulu: before any blob schedule entry, the electra blob parameters
    const fulu = forkDigest(chainConfig.FULU_FORK_VERSION, {epoch: chainConfig.ELECTRA_FORK_EPOCH, max: chainConfig.MAX_BLOBS_PER_BLOCK_ELECTRA});
    expect(stringifyTopic(config, {type: "data_column_sidecar", subnet: 127, boundary: boundary(6)})).toBe(`/eth2/${fulu}/data_column_sidecar_127/ssz_snappy`);
    const bpo = forkDigest(chainConfig.FULU_FORK_VERSION, {epoch: 10, max: 12});
    expect(bpo).not.toBe(fulu);
    expect(stringifyTopic(config, {type: "sync_committee", subnet: 3, boundary: boundary(10)})).toBe(`/eth2/${bpo}/sync_committee_3/ssz_snappy`);
  });

  it("parse back to type, subnet and boundary; anything unknown is null", () => {
    const altair = forkDigest(chainConfig.ALTAIR_FORK_VERSION);
    const deneb = forkDigest(chainConfig.DENEB_FORK_VERSION);
    expect(parseTopic(config, `/eth2/${altair}/sync_committee_contribution_and_proof/ssz_snappy`)).toEqual({
      type: "sync_committee_contribution_and_proof",
      forkDigest: altair,
      boundary: {fork: "altair", epoch: 1},
    });
    expect(parseTopic(config, `/eth2/${altair}/sync_committee_2/ssz_snappy`)).toMatchObject({type: "sync_committee", subnet: 2});
    expect(parseTopic(config, `/eth2/${deneb}/blob_sidecar_5/ssz_snappy`)).toMatchObject({type: "blob_sidecar", subnet: 5, boundary: {fork: "deneb"}});
    const unknown = [
      "/eth2/01020304/beacon_block/ssz_snappy", // not our digest
      `/eth2/${altair}/beacon_block/ssz`, // encoding
      `/eth2/${altair.toUpperCase()}/beacon_block/ssz_snappy`,
      `/eth2/${altair}/beacon_blocks/ssz_snappy`,
      `/eth2/${altair}/beacon_block_1/ssz_snappy`, // no subnet on a global topic
      `/eth2/${altair}/beacon_attestation/ssz_snappy`, // a subnet topic without subnet
      `/eth2/${altair}/beacon_attestation_64/ssz_snappy`,
      `/eth2/${altair}/beacon_attestation_01/ssz_snappy`,
      `/eth2/${altair}/sync_committee_4/ssz_snappy`,
      `/eth2/${forkDigest(chainConfig.GENESIS_FORK_VERSION)}/sync_committee_0/ssz_snappy`, // not a phase0 topic
      `/eth2/${altair}/bls_to_execution_change/ssz_snappy`, // capella on
      `/eth2/${deneb}/blob_sidecar_6/ssz_snappy`, // deneb has 6 blob subnets
      `/eth2/${deneb}/data_column_sidecar_0/ssz_snappy`,
      `/eth2/${forkDigest(chainConfig.FULU_FORK_VERSION, {epoch: 5, max: 9})}/blob_sidecar_0/ssz_snappy`, // deprecated in fulu
    ];
    for (const topic of unknown) expect([topic, parseTopic(config, topic)]).toEqual([topic, null]);
    const electra = forkDigest(chainConfig.ELECTRA_FORK_VERSION);
    expect(parseTopic(config, `/eth2/${electra}/blob_sidecar_8/ssz_snappy`)).toMatchObject({subnet: 8});
    expect(parseTopic(config, `/eth2/${electra}/light_client_finality_update/ssz_snappy`)).toMatchObject({type: "light_client_finality_update"});
  });

  it("round-trip every topic of every boundary", () => {
    for (const b of config.forkBoundariesAscendingEpochOrder) {
      const topics = topicsForBoundary(config, b, {attestationSubnets: [0, 63], syncCommitteeSubnets: [1], dataColumnSubnets: [5]});
      for (const topic of topics) expect(parseTopic(config, stringifyTopic(config, topic))).toMatchObject(topic);
    }
  });
});

describe("topics of a fork boundary", () => {
  const names = (epoch: number, subnets = {}) => topicsForBoundary(config, boundary(epoch), subnets).map((t) => (t.subnet === undefined ? t.type : `${t.type}_${t.subnet}`));
  const global = ["beacon_block", "beacon_aggregate_and_proof", "voluntary_exit", "proposer_slashing", "attester_slashing"];

  it("are the fork's global topics, every blob subnet, and the chosen subnets", () => {
    expect(names(0, {attestationSubnets: [4, 4, 9], syncCommitteeSubnets: [1]})).toEqual([...global, "beacon_attestation_4", "beacon_attestation_9"]);
    const lightClient = ["light_client_finality_update", "light_client_optimistic_update"];
    expect(names(1, {syncCommitteeSubnets: [1]})).toEqual([...global, "sync_committee_contribution_and_proof", ...lightClient, "sync_committee_1"]);
    expect(names(3)).toEqual([...global, "sync_committee_contribution_and_proof", "bls_to_execution_change", ...lightClient]);
    expect(names(4).filter((n) => n.startsWith("blob_sidecar"))).toHaveLength(6);
    expect(names(5).filter((n) => n.startsWith("blob_sidecar"))).toHaveLength(9);
    expect(names(6, {dataColumnSubnets: [0, 100]})).toEqual([
      ...global,
      "sync_committee_contribution_and_proof",
      "bls_to_execution_change",
      ...lightClient,
      "data_column_sidecar_0",
      "data_column_sidecar_100",
    ]);
    expect(() => topicsForBoundary(config, boundary(0), {attestationSubnets: [64]})).toThrow(/out of range/);
  });

  it("use each fork's SSZ types", () => {
    expect(gossipSszType("beacon_block", ForkName.phase0)).toBe(ssz.phase0.SignedBeaconBlock);
    expect(gossipSszType("beacon_block", ForkName.fulu)).toBe(ssz.fulu.SignedBeaconBlock);
    expect(gossipSszType("beacon_attestation", ForkName.deneb)).toBe(ssz.phase0.Attestation);
    expect(gossipSszType("beacon_attestation", ForkName.electra)).toBe(ssz.electra.SingleAttestation);
    expect(gossipSszType("beacon_aggregate_and_proof", ForkName.capella)).toBe(ssz.phase0.SignedAggregateAndProof);
    expect(gossipSszType("beacon_aggregate_and_proof", ForkName.fulu)).toBe(ssz.electra.SignedAggregateAndProof);
    expect(gossipSszType("attester_slashing", ForkName.deneb)).toBe(ssz.phase0.AttesterSlashing);
    expect(gossipSszType("attester_slashing", ForkName.electra)).toBe(ssz.electra.AttesterSlashing);
    expect(gossipSszType("light_client_optimistic_update", ForkName.capella)).toBe(ssz.capella.LightClientOptimisticUpdate);
    expect(() => gossipSszType("sync_committee", ForkName.phase0)).toThrow();
  });
});

describe("activeBoundariesAt", () => {
  const epochsAt = (epoch: number, c = config) => activeBoundariesAt(c, epoch).map((b) => `${b.fork}@${b.epoch}`);

  it("subscribes two epochs ahead of a boundary and keeps the old one two epochs after", () => {
    const spaced = createBeaconConfig(devChainConfig({secondsPerSlot: 2, genesisFork: "phase0", forkEpochs: {altair: 10, bellatrix: 20}}), GVR);
    expect(epochsAt(0, spaced)).toEqual(["phase0@0"]);
    expect(epochsAt(7, spaced)).toEqual(["phase0@0"]);
    expect(epochsAt(8, spaced)).toEqual(["phase0@0", "altair@10"]);
    expect(epochsAt(11, spaced)).toEqual(["phase0@0", "altair@10"]);
    expect(epochsAt(12, spaced)).toEqual(["altair@10"]);
    expect(epochsAt(18, spaced)).toEqual(["altair@10", "bellatrix@20"]);
    expect(epochsAt(22, spaced)).toEqual(["bellatrix@20"]);
    expect(epochsAt(10_000, spaced)).toEqual(["bellatrix@20"]);
  });

  it("counts several forks at one epoch as the last of them, and keeps up with close boundaries", () => {
    const allAtGenesis = createBeaconConfig(devChainConfig({secondsPerSlot: 2, genesisFork: "fulu", forkEpochs: {}}), GVR);
    expect(epochsAt(0, allAtGenesis)).toEqual(["fulu@0"]);
    // bellatrix ended at epoch 3: its topics stay until epoch 5
    expect(epochsAt(4)).toEqual(["bellatrix@2", "capella@3", "deneb@4", "electra@5", "fulu@6"]);
    expect(epochsAt(5)).toEqual(["capella@3", "deneb@4", "electra@5", "fulu@6"]);
    expect(epochsAt(9)).toEqual(["fulu@6", "fulu@10"]);
    expect(epochsAt(12)).toEqual(["fulu@10"]);
  });
});

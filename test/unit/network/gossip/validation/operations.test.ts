import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {Signature, aggregateSignatures} from "@chainsafe/blst";
import {DOMAIN_BEACON_PROPOSER, DOMAIN_BLS_TO_EXECUTION_CHANGE} from "@lodestar/params";
import {computeDomain, computeSigningRoot, interopSecretKey} from "@lodestar/state-transition";
import {ssz, type capella, type electra, type phase0} from "@lodestar/types";
import type {GossipType} from "../../../../../src/network/gossip/topics.ts";
import {type ChainEnv, createChainEnv} from "./chainEnv.ts";

describe("operation gossip validation (fulu, SHARD_COMMITTEE_PERIOD 0)", () => {
  let env: ChainEnv;
  beforeAll(async () => {
    env = await createChainEnv("fulu", {SHARD_COMMITTEE_PERIOD: 0});
    env.setTime(3, 100);
  }, 60_000);
  afterAll(() => env.close());

  const validate = (type: GossipType, message: object) => env.validators[type](env.topic(type), message, "peer");

  function exit(validatorIndex: number, epoch = 0, signer = validatorIndex): phase0.SignedVoluntaryExit {
    const message = {epoch, validatorIndex};
    const domain = env.config.getDomainForVoluntaryExit(3, 0);
    return {message, signature: env.sign(signer, computeSigningRoot(ssz.phase0.VoluntaryExit, message, domain))};
  }

  function header(proposerIndex: number, fill: number, signer = proposerIndex): phase0.SignedBeaconBlockHeader {
    const message = {slot: 1, proposerIndex, parentRoot: new Uint8Array(32).fill(fill), stateRoot: new Uint8Array(32), bodyRoot: new Uint8Array(32)};
    const root = computeSigningRoot(ssz.phase0.BeaconBlockHeader, message, env.config.getDomain(1, DOMAIN_BEACON_PROPOSER, 1));
    return {message, signature: env.sign(signer, root)};
  }

  async function doubleVote(indices: number[], forgeSecond = false): Promise<electra.AttesterSlashing> {
    const data1 = await env.attestationData(2);
    const data2 = {...data1, beaconBlockRoot: new Uint8Array(32).fill(9)};
    const indexed = (data: phase0.AttestationData, signers: number[]) => ({
      attestingIndices: indices,
      data,
      signature: aggregateSignatures(signers.map((i) => Signature.fromBytes(env.signAttestation(data, i)))).toBytes(),
    });
    return {attestation1: indexed(data1, indices), attestation2: indexed(data2, forgeSecond ? indices.map((i) => i + 1) : indices)} as never;
  }

  function blsChange(validatorIndex: number, signer = validatorIndex): capella.SignedBLSToExecutionChange {
    const message = {validatorIndex, fromBlsPubkey: interopSecretKey(validatorIndex).toPublicKey().toBytes(), toExecutionAddress: new Uint8Array(20).fill(0xaa)};
    const domain = computeDomain(DOMAIN_BLS_TO_EXECUTION_CHANGE, env.config.GENESIS_FORK_VERSION, env.chain.genesisValidatorsRoot);
    return {message, signature: env.sign(signer, computeSigningRoot(ssz.capella.BLSToExecutionChange, message, domain))};
  }

  it("voluntary_exit: ACCEPT into the pool, IGNORE the validator's next, REJECT a bad signature or an exit process_voluntary_exit refuses", async () => {
    expect(await validate("voluntary_exit", exit(8, 0, 9))).toMatchObject({result: "REJECT", reason: "invalid signature"});
    expect(await validate("voluntary_exit", exit(8, 5))).toMatchObject({result: "REJECT", reason: expect.stringMatching(/exit epoch is after the current epoch/)});
    expect(await validate("voluntary_exit", exit(8))).toMatchObject({result: "ACCEPT"});
    expect(await validate("voluntary_exit", exit(8))).toMatchObject({result: "IGNORE", reason: expect.stringMatching(/validator 8 was seen already/)});
    expect(env.chain.pools.opPool.getVoluntaryExits()).toHaveLength(1);
  });

  it("proposer_slashing: ACCEPT, IGNORE a second one of the proposer, REJECT a bad signature", async () => {
    expect(await validate("proposer_slashing", {signedHeader1: header(5, 1), signedHeader2: header(5, 2, 6)})).toMatchObject({
      result: "REJECT",
      reason: "invalid signature of header 2",
    });
    expect(await validate("proposer_slashing", {signedHeader1: header(5, 1), signedHeader2: header(5, 2)})).toMatchObject({result: "ACCEPT"});
    expect(await validate("proposer_slashing", {signedHeader1: header(5, 3), signedHeader2: header(5, 4)})).toMatchObject({result: "IGNORE"});
  });

  it("attester_slashing: ACCEPT, IGNORE one that slashes nobody new, REJECT a bad signature", async () => {
    expect(await validate("attester_slashing", await doubleVote([1, 2], true))).toMatchObject({result: "REJECT", reason: "invalid signature of attestation 2"});
    expect(await validate("attester_slashing", await doubleVote([1, 2]))).toMatchObject({result: "ACCEPT"});
    expect(await validate("attester_slashing", await doubleVote([1, 2]))).toMatchObject({result: "IGNORE"});
  });

  it("bls_to_execution_change: ACCEPT, IGNORE the validator's next, REJECT a bad signature", async () => {
    expect(await validate("bls_to_execution_change", blsChange(3, 4))).toMatchObject({result: "REJECT", reason: "invalid signature"});
    expect(await validate("bls_to_execution_change", blsChange(3))).toMatchObject({result: "ACCEPT"});
    expect(await validate("bls_to_execution_change", blsChange(3))).toMatchObject({result: "IGNORE"});
  });
});

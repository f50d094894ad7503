import {describe, it, expect} from "@jest/globals";
import {Signature, aggregateSignatures} from "@chainsafe/blst";
import {DOMAIN_BEACON_PROPOSER, DOMAIN_BLS_TO_EXECUTION_CHANGE, DOMAIN_VOLUNTARY_EXIT, ETH1_ADDRESS_WITHDRAWAL_PREFIX} from "@lodestar/params";
import {computeDomain, computeSigningRoot, computeStartSlotAtEpoch, interopSecretKey} from "@lodestar/state-transition";
import {ssz, type capella, type phase0} from "@lodestar/types";
import {type TestEnv, applyBlock, attestationData, createEnv, sign, signAttestationData} from "./helpers.ts";
import {expectRejected} from "./expectRejected.ts";


function signedHeader(env: TestEnv, proposerIndex: number, slot: number, fill: number, signer = proposerIndex): phase0.SignedBeaconBlockHeaderBigint {
  const message = {slot: BigInt(slot), proposerIndex, parentRoot: new Uint8Array(32).fill(fill), stateRoot: new Uint8Array(32), bodyRoot: new Uint8Array(32)};
  const root = computeSigningRoot(ssz.phase0.BeaconBlockHeaderBigint, message, env.config.getDomain(slot, DOMAIN_BEACON_PROPOSER, slot));
  return {message, signature: sign(env, signer, root)};
}

function proposerSlashing(env: TestEnv, proposerIndex: number, signer2 = proposerIndex): phase0.ProposerSlashing {
  return {signedHeader1: signedHeader(env, proposerIndex, 3, 1), signedHeader2: signedHeader(env, proposerIndex, 3, 2, signer2)};
}

/** A double vote of `indices` at slot 9: two attestations of one target with different head votes. */
function attesterSlashing(env: TestEnv, indices: number[], opts: {sameData?: boolean; forgeSecond?: boolean} = {}): phase0.AttesterSlashing {
  const data1 = attestationData(env, 9, 0);
  const data2 = opts.sameData ? data1 : {...data1, beaconBlockRoot: new Uint8Array(32).fill(9)};
  const indexed = (data: phase0.AttestationData, signers: number[]) => ({
    attestingIndices: indices,
    data: ssz.phase0.AttestationDataBigint.deserialize(ssz.phase0.AttestationData.serialize(data)),
    signature: aggregateSignatures(signers.map((i) => Signature.fromBytes(signAttestationData(env, data, i)))).toBytes(),
  });
  return {attestation1: indexed(data1, indices), attestation2: indexed(data2, opts.forgeSecond ? indices.map((i) => i + 1) : indices)};
}

function voluntaryExit(env: TestEnv, validatorIndex: number, epoch = 0, signer = validatorIndex): phase0.SignedVoluntaryExit {
  const message = {epoch, validatorIndex};
  const domain = env.config.getDomain(env.state.slot, DOMAIN_VOLUNTARY_EXIT, computeStartSlotAtEpoch(epoch));
  return {message, signature: sign(env, signer, computeSigningRoot(ssz.phase0.VoluntaryExit, message, domain))};
}

describe("OpPool slashings and exits (altair, SHARD_COMMITTEE_PERIOD 0)", () => {
  const env = () => createEnv("altair", 10, {overrides: {SHARD_COMMITTEE_PERIOD: 0}});

  it("accepts a proposer slashing and rejects equal headers and a wrong signature", async () => {
    const e = env();
    await expectRejected(e.pools.opPool.submitProposerSlashing({signedHeader1: signedHeader(e, 5, 3, 1), signedHeader2: signedHeader(e, 5, 3, 1)}), /headers are equal/);
    await expectRejected(e.pools.opPool.submitProposerSlashing(proposerSlashing(e, 5, 6)), /^invalid signature of header 2$/);
    await expectRejected(e.pools.opPool.submitProposerSlashing(proposerSlashing(e, 5000)), /unknown validator 5000/);
    expect(e.pools.opPool.getProposerSlashings()).toEqual([]);
    await e.pools.opPool.submitProposerSlashing(proposerSlashing(e, 5));
    expect(e.pools.opPool.getProposerSlashings()).toHaveLength(1);
    expect(e.events.map((x) => x.topic)).toEqual(["proposer_slashing"]);
  });

  it("accepts an attester slashing and rejects one that is not slashable or badly signed", async () => {
    const e = env();
    await expectRejected(e.pools.opPool.submitAttesterSlashing(attesterSlashing(e, [1, 2], {sameData: true})), /not slashable/);
    await expectRejected(e.pools.opPool.submitAttesterSlashing(attesterSlashing(e, [1, 2], {forgeSecond: true})), /^invalid signature of attestation 2$/);
    await expectRejected(e.pools.opPool.submitAttesterSlashing(attesterSlashing(e, [2, 1])), /invalid attester slashing/);
    expect(e.pools.opPool.getAttesterSlashings()).toEqual([]);
    await e.pools.opPool.submitAttesterSlashing(attesterSlashing(e, [1, 2]));
    // the same validators again: nothing new, ignored
    await e.pools.opPool.submitAttesterSlashing(attesterSlashing(e, [1, 2]));
    expect(e.pools.opPool.getAttesterSlashings()).toHaveLength(1);
    expect(e.events.map((x) => x.topic)).toEqual(["attester_slashing"]);
  });

  it("accepts a voluntary exit and rejects a future one and a wrong signature", async () => {
    const e = env();
    await expectRejected(e.pools.opPool.submitVoluntaryExit(voluntaryExit(e, 7, 0, 8)), /^invalid signature$/);
    await expectRejected(e.pools.opPool.submitVoluntaryExit(voluntaryExit(e, 7, 5)), /exit epoch is after the current epoch/);
    await e.pools.opPool.submitVoluntaryExit(voluntaryExit(e, 7));
    expect(e.pools.opPool.getVoluntaryExits()).toHaveLength(1);
    expect(e.events.map((x) => x.topic)).toEqual(["voluntary_exit"]);
  });

  it("getForBlock gives operations a block accepts, without conflicts; pruneIncluded drops them once applied", async () => {
    const e = env();
    await e.pools.opPool.submitProposerSlashing(proposerSlashing(e, 5));
    await e.pools.opPool.submitAttesterSlashing(attesterSlashing(e, [1, 2]));
    await e.pools.opPool.submitVoluntaryExit(voluntaryExit(e, 7));
    await e.pools.opPool.submitVoluntaryExit(voluntaryExit(e, 5)); // being slashed in the same block
    const ops = e.pools.opPool.getForBlock(e.stateAt(11));
    expect(ops.proposerSlashings).toHaveLength(1);
    expect(ops.attesterSlashings).toHaveLength(1);
    expect(ops.voluntaryExits.map((x) => x.message.validatorIndex)).toEqual([7]);
    expect(ops.blsToExecutionChanges).toEqual([]);
    const post = applyBlock(e, 11, {
      proposerSlashings: ops.proposerSlashings,
      attesterSlashings: ops.attesterSlashings,
      voluntaryExits: ops.voluntaryExits,
    });
    e.pools.opPool.pruneIncluded(post);
    expect(e.pools.opPool.getProposerSlashings()).toEqual([]);
    expect(e.pools.opPool.getAttesterSlashings()).toEqual([]);
    expect(e.pools.opPool.getVoluntaryExits()).toEqual([]); // 7 exited; 5 slashed, so exiting too
  });
});

describe("OpPool with the default SHARD_COMMITTEE_PERIOD", () => {
  it("rejects the exit of a validator not active long enough", async () => {
    const e = createEnv("altair", 10);
    await expectRejected(e.pools.opPool.submitVoluntaryExit(voluntaryExit(e, 7)), /validator 7: validator has not been active for SHARD_COMMITTEE_PERIOD/);
  });
});

describe("OpPool BLS to execution changes (fulu)", () => {
  function change(e: TestEnv, validatorIndex: number, keyOf = validatorIndex, signer = keyOf): capella.SignedBLSToExecutionChange {
    const message = {validatorIndex, fromBlsPubkey: interopSecretKey(keyOf).toPublicKey().toBytes(), toExecutionAddress: new Uint8Array(20).fill(0xaa)};
    const domain = computeDomain(DOMAIN_BLS_TO_EXECUTION_CHANGE, e.config.GENESIS_FORK_VERSION, e.genesis.genesisValidatorsRoot);
    return {message, signature: sign(e, signer, computeSigningRoot(ssz.capella.BLSToExecutionChange, message, domain))};
  }

  it("accepts a valid change, rejects a wrong key or signature, and prunes it once applied", async () => {
    const e = createEnv("fulu", 10);
    await expectRejected(e.pools.opPool.submitBlsToExecutionChange(change(e, 3, 4)), /invalid BLS to execution change for validator 3: Invalid withdrawalCredentials/);
    await expectRejected(e.pools.opPool.submitBlsToExecutionChange(change(e, 3, 3, 4)), /^invalid signature$/);
    await e.pools.opPool.submitBlsToExecutionChange(change(e, 3));
    expect(e.events.map((x) => x.topic)).toEqual(["bls_to_execution_change"]);
    expect(e.pools.opPool.getForBlock(e.stateAt(11)).blsToExecutionChanges).toHaveLength(1);

    const applied = e.stateAt(11).clone();
    const credentials = new Uint8Array(32);
    credentials[0] = ETH1_ADDRESS_WITHDRAWAL_PREFIX;
    applied.validators.get(3).withdrawalCredentials = credentials;
    applied.commit();
    expect(e.pools.opPool.getForBlock(applied).blsToExecutionChanges).toEqual([]);
    e.pools.opPool.pruneIncluded(applied);
    expect(e.pools.opPool.getBlsToExecutionChanges()).toEqual([]);
  });
});

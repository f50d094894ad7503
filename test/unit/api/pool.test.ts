import {beforeAll, describe, expect, it} from "@jest/globals";
import {Signature, aggregateSignatures} from "@chainsafe/blst";
import {BitArray} from "@chainsafe/ssz";
import {DOMAIN_BEACON_PROPOSER, DOMAIN_BLS_TO_EXECUTION_CHANGE, MAX_COMMITTEES_PER_SLOT} from "@lodestar/params";
import {computeDomain, computeSigningRoot, interopSecretKey} from "@lodestar/state-transition";
import {ssz, type capella, type electra, type phase0} from "@lodestar/types";
import request from "supertest";
import type {ApiContext} from "../../../src/api/impl/index.ts";
import {createApp} from "../../../src/api/server/index.ts";
import type {DevFork} from "../../../src/config/chainConfig.ts";
import {type TestEnv, attestationData, committeeAt, createEnv, sign, signAttestationData} from "../pools/helpers.ts";
import {TestChain, createTestContext} from "./testContext.ts";

/**
 * The pool routes over the real operation pools (every operation validated, signatures
 * included, by OperationPools) on a chain of 64 interop validators at slot 10, with
 * SHARD_COMMITTEE_PERIOD 0 so that validators may exit at once.
 */

const SLOT = 10;

interface PoolApp {
  env: TestEnv;
  app: ReturnType<typeof createApp>;
}

function poolApp(fork: DevFork): PoolApp {
  const env = createEnv(fork, SLOT, {overrides: {SHARD_COMMITTEE_PERIOD: 0}});
  const chain = new TestChain(env.genesis);
  chain.slot = SLOT;
  const ctx: ApiContext = {...createTestContext().ctx, chain, pools: env.pools};
  return {env, app: createApp({}, ctx)};
}

// ------------------------------------------------------------------ signed operations

function single(env: TestEnv, committeeIndex: number, attesterIndex: number): electra.SingleAttestation {
  const data = attestationData(env, SLOT, 0);
  return {committeeIndex, attesterIndex, data, signature: signAttestationData(env, data, attesterIndex)};
}

function phase0Single(env: TestEnv, committeeIndex: number, position: number): phase0.Attestation {
  const committee = committeeAt(env, SLOT, committeeIndex);
  const data = attestationData(env, SLOT, committeeIndex);
  return {aggregationBits: BitArray.fromSingleBit(committee.length, position), data, signature: signAttestationData(env, data, committee[position])};
}

function aggregateSignature(env: TestEnv, data: phase0.AttestationData, validators: number[]): Uint8Array {
  return aggregateSignatures(validators.map((v) => Signature.fromBytes(signAttestationData(env, data, v)))).toBytes();
}

function bitsAt(length: number, positions: number[]): BitArray {
  const bits = BitArray.fromBitLen(length);
  for (const p of positions) bits.set(p, true);
  return bits;
}

function proposerSlashing(env: TestEnv, proposerIndex: number, signer2 = proposerIndex): phase0.ProposerSlashing {
  const header = (fill: number, signer: number): phase0.SignedBeaconBlockHeaderBigint => {
    const message = {slot: 3n, proposerIndex, parentRoot: new Uint8Array(32).fill(fill), stateRoot: new Uint8Array(32), bodyRoot: new Uint8Array(32)};
    const root = computeSigningRoot(ssz.phase0.BeaconBlockHeaderBigint, message, env.config.getDomain(3, DOMAIN_BEACON_PROPOSER, 3));
    return {message, signature: sign(env, signer, root)};
  };
  return {signedHeader1: header(1, proposerIndex), signedHeader2: header(2, signer2)};
}

/** A double vote of `indices` at slot 9 (`sameData`: no double vote, so nothing slashable). */
function attesterSlashing(env: TestEnv, indices: number[], sameData = false): phase0.AttesterSlashing {
  const data1 = attestationData(env, 9, 0);
  const data2 = sameData ? data1 : {...data1, beaconBlockRoot: new Uint8Array(32).fill(9)};
  const indexed = (data: phase0.AttestationData) => ({
    attestingIndices: indices,
    data: ssz.phase0.AttestationDataBigint.deserialize(ssz.phase0.AttestationData.serialize(data)),
    signature: aggregateSignature(env, data, indices),
  });
  return {attestation1: indexed(data1), attestation2: indexed(data2)};
}

function voluntaryExit(env: TestEnv, validatorIndex: number, epoch = 0): phase0.SignedVoluntaryExit {
  const message = {epoch, validatorIndex};
  const domain = env.config.getDomainForVoluntaryExit(SLOT);
  return {message, signature: sign(env, validatorIndex, computeSigningRoot(ssz.phase0.VoluntaryExit, message, domain))};
}

function blsChange(env: TestEnv, validatorIndex: number, keyOf = validatorIndex): capella.SignedBLSToExecutionChange {
  const message = {validatorIndex, fromBlsPubkey: interopSecretKey(keyOf).toPublicKey().toBytes(), toExecutionAddress: new Uint8Array(20).fill(0xaa)};
  const domain = computeDomain(DOMAIN_BLS_TO_EXECUTION_CHANGE, env.config.GENESIS_FORK_VERSION, env.genesis.genesisValidatorsRoot);
  return {message, signature: sign(env, keyOf, computeSigningRoot(ssz.capella.BLSToExecutionChange, message, domain))};
}

const useV2 = (what: string, fork: string, method: string, path: string, id: string) => `${what}, and the current fork is ${fork}: use ${method} ${path} (${id})`;

// ------------------------------------------------------------------ electra formats

describe("pool routes on fulu (electra formats)", () => {
  let p: PoolApp;
  beforeAll(() => {
    p = poolApp("fulu");
  });

  it("submitPoolAttestationsV2 applies the valid attestations and reports the rest by index; getPoolAttestationsV2 serves their aggregate", async () => {
    const {env, app} = p;
    const committee = committeeAt(env, SLOT, 1);
    const forged = {...single(env, 1, committee[1]), signature: single(env, 1, committee[0]).signature};
    const body = [single(env, 1, committee[0]), forged, single(env, 1, committee[2])].map((a) => ssz.electra.SingleAttestation.toJson(a));
    const res = await request(app).post("/eth/v2/beacon/pool/attestations").set("Eth-Consensus-Version", "fulu").send(body).expect(400);
    expect(res.body).toEqual({code: 400, message: "1 of 3 attestations failed", failures: [{index: 1, message: expect.stringMatching(/signature/)}]});

    const data = attestationData(env, SLOT, 0);
    const expected: electra.Attestation = {
      aggregationBits: bitsAt(committee.length, [0, 2]),
      data,
      signature: aggregateSignature(env, data, [committee[0], committee[2]]),
      committeeBits: bitsAt(MAX_COMMITTEES_PER_SLOT, [1]),
    };
    const pool = await request(app).get("/eth/v2/beacon/pool/attestations").expect(200);
    expect(pool.headers["eth-consensus-version"]).toBe("fulu");
    expect(pool.body).toEqual({version: "fulu", data: [ssz.electra.Attestation.toJson(expected)]});
  });

  it("getPoolAttestationsV2 filters by slot and committee_index; 400 for a malformed filter", async () => {
    const get = (query: string) => request(p.app).get(`/eth/v2/beacon/pool/attestations?${query}`);
    expect((await get(`slot=${SLOT}&committee_index=1`).expect(200)).body.data).toHaveLength(1);
    expect((await get("committee_index=0").expect(200)).body).toEqual({version: "fulu", data: []});
    expect((await get("slot=9").expect(200)).body).toEqual({version: "fulu", data: []});
    expect((await get("slot=current").expect(400)).body).toEqual({code: 400, message: "Invalid slot: current"});
    expect((await get("committee_index=-1").expect(400)).body).toEqual({code: 400, message: "Invalid committee_index: -1"});
  });

  it("the filters take any uint64: the largest matches nothing (200, empty), 2^64 does not parse (400)", async () => {
    const get = (query: string) => request(p.app).get(`/eth/v2/beacon/pool/attestations?${query}`);
    for (const name of ["slot", "committee_index"]) {
      expect((await get(`${name}=18446744073709551615`).expect(200)).body.data).toEqual([]);
      expect((await get(`${name}=18446744073709551616`).expect(400)).body).toEqual({code: 400, message: `Invalid ${name}: 18446744073709551616`});
    }
  });

  it("getPoolAttestations (v1) on fulu: 200 with the attestations the old type can carry, which is none", async () => {
    expect((await request(p.app).get("/eth/v2/beacon/pool/attestations").expect(200)).body.data).toHaveLength(1);
    expect((await request(p.app).get("/eth/v1/beacon/pool/attestations").expect(200)).body).toEqual({data: []});
  });

  it("attester slashings: v2 submit (400 with the pool's reason when invalid) and list with version", async () => {
    const {env, app} = p;
    const post = (slashing: phase0.AttesterSlashing) =>
      request(app).post("/eth/v2/beacon/pool/attester_slashings").set("Eth-Consensus-Version", "fulu").send(ssz.electra.AttesterSlashing.toJson(slashing));
    const invalid = await post(attesterSlashing(env, [1, 2], true)).expect(400);
    expect(invalid.body).toEqual({code: 400, message: expect.stringMatching(/^invalid attester slashing: .*not slashable/)});
    expect((await request(app).get("/eth/v2/beacon/pool/attester_slashings").expect(200)).body).toEqual({version: "fulu", data: []});

    const slashing = attesterSlashing(env, [1, 2]);
    await post(slashing).expect(200);
    const res = await request(app).get("/eth/v2/beacon/pool/attester_slashings").expect(200);
    expect(res.headers["eth-consensus-version"]).toBe("fulu");
    expect(res.body).toEqual({version: "fulu", data: [ssz.electra.AttesterSlashing.toJson(slashing)]});
    expect(res.body.data[0].attestation_1.attesting_indices).toEqual(["1", "2"]);

    const noHeader = await request(app).post("/eth/v2/beacon/pool/attester_slashings").send(ssz.electra.AttesterSlashing.toJson(slashing)).expect(400);
    expect(noHeader.body).toEqual({code: 400, message: "Missing required parameter Eth-Consensus-Version"});
  });

  it("attester slashings v1 on fulu: get lists none the old type can carry (200); submit is a 400 naming v2 and submits nothing", async () => {
    const {env, app} = p;
    expect((await request(app).get("/eth/v2/beacon/pool/attester_slashings").expect(200)).body.data).toHaveLength(1);
    expect((await request(app).get("/eth/v1/beacon/pool/attester_slashings").expect(200)).body).toEqual({data: []});
    const before = env.pools.opPool.getAttesterSlashings().length;
    const post = await request(app).post("/eth/v1/beacon/pool/attester_slashings").send(ssz.phase0.AttesterSlashing.toJson(attesterSlashing(env, [3, 4]))).expect(400);
    expect(post.body).toEqual({
      code: 400,
      message: useV2("submitPoolAttesterSlashings carries pre-electra attester slashings only", "fulu", "POST", "/eth/v2/beacon/pool/attester_slashings", "submitPoolAttesterSlashingsV2"),
    });
    expect(env.pools.opPool.getAttesterSlashings()).toHaveLength(before);
  });

  it("proposer slashings: submit (400 for a bad signature or a malformed body) and list", async () => {
    const {env, app} = p;
    const post = (body: unknown) => request(app).post("/eth/v1/beacon/pool/proposer_slashings").send(body as object);
    expect((await post(ssz.phase0.ProposerSlashing.toJson(proposerSlashing(env, 5, 6))).expect(400)).body).toEqual({code: 400, message: "invalid signature of header 2"});
    expect((await post({signed_header_1: {}}).expect(400)).body.message).toMatch(/^Invalid request body: /);
    expect((await request(app).get("/eth/v1/beacon/pool/proposer_slashings").expect(200)).body).toEqual({data: []});

    const slashing = proposerSlashing(env, 5);
    await post(ssz.phase0.ProposerSlashing.toJson(slashing)).expect(200);
    const res = await request(app).get("/eth/v1/beacon/pool/proposer_slashings").expect(200);
    expect(res.body).toEqual({data: [ssz.phase0.ProposerSlashing.toJson(slashing)]});
    expect(res.body.data[0].signed_header_1.message).toMatchObject({slot: "3", proposer_index: "5"});
  });

  it("voluntary exits: submit (400 with the reason when invalid) and list", async () => {
    const {env, app} = p;
    const post = (exit: phase0.SignedVoluntaryExit) => request(app).post("/eth/v1/beacon/pool/voluntary_exits").send(ssz.phase0.SignedVoluntaryExit.toJson(exit));
    expect((await post(voluntaryExit(env, 8, 5)).expect(400)).body).toEqual({code: 400, message: "invalid voluntary exit for validator 8: exit epoch is after the current epoch"});
    expect((await post({...voluntaryExit(env, 8), signature: voluntaryExit(env, 9).signature}).expect(400)).body).toEqual({code: 400, message: "invalid signature"});

    const exit = voluntaryExit(env, 8);
    await post(exit).expect(200);
    const res = await request(app).get("/eth/v1/beacon/pool/voluntary_exits").expect(200);
    expect(res.body).toEqual({data: [{message: {epoch: "0", validator_index: "8"}, signature: ssz.BLSSignature.toJson(exit.signature)}]});
  });

  it("BLS to execution changes: a list whose valid items are applied, failures by index; then listed", async () => {
    const {env, app} = p;
    const body = [blsChange(env, 20), blsChange(env, 21, 22), blsChange(env, 23)].map((c) => ssz.capella.SignedBLSToExecutionChange.toJson(c));
    const res = await request(app).post("/eth/v1/beacon/pool/bls_to_execution_changes").send(body).expect(400);
    expect(res.body).toEqual({
      code: 400,
      message: "1 of 3 BLS to execution changes failed",
      failures: [{index: 1, message: expect.stringMatching(/^invalid BLS to execution change for validator 21: /)}],
    });
    const pool = await request(app).get("/eth/v1/beacon/pool/bls_to_execution_changes").expect(200);
    expect(pool.body).toEqual({data: [body[0], body[2]]});
    expect(pool.body.data[0].message).toEqual({validator_index: "20", from_bls_pubkey: expect.stringMatching(/^0x[0-9a-f]{96}$/), to_execution_address: expect.stringMatching(/^0xa{40}$/i)});

    await request(app).post("/eth/v1/beacon/pool/bls_to_execution_changes").send([ssz.capella.SignedBLSToExecutionChange.toJson(blsChange(env, 24))]).expect(200);
    expect((await request(app).get("/eth/v1/beacon/pool/bls_to_execution_changes").expect(200)).body.data).toHaveLength(3);
    expect((await request(app).post("/eth/v1/beacon/pool/bls_to_execution_changes").send({not: "a list"}).expect(400)).body.message).toMatch(/^Invalid request body/);
  });
});

// ------------------------------------------------------------------ pre-electra formats

describe("pool routes on deneb (pre-electra formats)", () => {
  let p: PoolApp;
  beforeAll(() => {
    p = poolApp("deneb");
  });

  it("v1 attestations: submitted, then served by v1 (filters too) and by v2 with version deneb", async () => {
    const {env, app} = p;
    const committee = committeeAt(env, SLOT, 0);
    const body = [phase0Single(env, 0, 0), phase0Single(env, 0, 1)].map((a) => ssz.phase0.Attestation.toJson(a));
    await request(app).post("/eth/v1/beacon/pool/attestations").send(body).expect(200);

    const data = attestationData(env, SLOT, 0);
    const expected = ssz.phase0.Attestation.toJson({aggregationBits: bitsAt(committee.length, [0, 1]), data, signature: aggregateSignature(env, data, committee.slice(0, 2))});
    expect((await request(app).get("/eth/v1/beacon/pool/attestations").expect(200)).body).toEqual({data: [expected]});
    expect((await request(app).get(`/eth/v1/beacon/pool/attestations?slot=${SLOT}&committee_index=0`).expect(200)).body).toEqual({data: [expected]});
    expect((await request(app).get("/eth/v1/beacon/pool/attestations?committee_index=1").expect(200)).body).toEqual({data: []});
    const v2 = await request(app).get("/eth/v2/beacon/pool/attestations").expect(200);
    expect(v2.headers["eth-consensus-version"]).toBe("deneb");
    expect(v2.body).toEqual({version: "deneb", data: [expected]});
  });

  it("v1 attester slashings: submitted and listed; v2 lists them with version deneb", async () => {
    const {env, app} = p;
    const slashing = ssz.phase0.AttesterSlashing.toJson(attesterSlashing(env, [6, 7]));
    await request(app).post("/eth/v1/beacon/pool/attester_slashings").send(slashing).expect(200);
    expect((await request(app).get("/eth/v1/beacon/pool/attester_slashings").expect(200)).body).toEqual({data: [slashing]});
    expect((await request(app).get("/eth/v2/beacon/pool/attester_slashings").expect(200)).body).toEqual({version: "deneb", data: [slashing]});
    const invalid = await request(app).post("/eth/v1/beacon/pool/attester_slashings").send(ssz.phase0.AttesterSlashing.toJson(attesterSlashing(env, [6, 7], true))).expect(400);
    expect(invalid.body.message).toMatch(/^invalid attester slashing: /);
  });
});

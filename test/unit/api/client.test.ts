import {describe, it, expect, beforeAll, afterAll} from "@jest/globals";
import {ForkName} from "@lodestar/params";
import {ssz} from "@lodestar/types";
import {ApiClientError, createApiClient, httpTransport, type ApiClient} from "../../../src/api/client.ts";
import type {OperationId, RouteTable} from "../../../src/api/routes/index.ts";
import type {ArgsOf, WireFormat} from "../../../src/api/routes/types.ts";
import {inProcessTransport, startRestServer, type RestServer} from "../../../src/api/server/index.ts";
import {createValidatorBeaconApi} from "../../../src/api/validatorApi.ts";
import {REJECTED_SLOT, createTestContext, type TestContext} from "./testContext.ts";

let t: TestContext;
let server: RestServer;
let http: ApiClient;
let local: ApiClient;

beforeAll(async () => {
  t = createTestContext();
  server = await startRestServer({port: 0, address: "127.0.0.1"}, t.ctx);
  http = createApiClient(httpTransport(`http://127.0.0.1:${server.port}/`));
  local = createApiClient(inProcessTransport(t.ctx));
});
afterAll(() => server.close());

/** The outcome of a call, success or error, in a form both transports can be compared by. */
async function outcome<K extends OperationId>(client: ApiClient, id: K, args: ArgsOf<RouteTable[K]>, format: WireFormat = "json") {
  try {
    return {ok: await client.request(id, args, {format})};
  } catch (e) {
    if (!(e instanceof ApiClientError)) throw e;
    return {error: {status: e.status, code: e.code, message: e.message, failures: e.failures}};
  }
}

const RANDAO = Uint8Array.from({length: 96}, () => 0xab);
const pubkey = (i: number) => t.state.validators.getReadonly(i).pubkey;
const singleAttestation = (slot: number) => ({...ssz.electra.SingleAttestation.defaultValue(), data: {...ssz.phase0.AttestationData.defaultValue(), slot}});

describe("the in-process client gives exactly what the HTTP client gives", () => {
  const calls: [string, () => [OperationId, object, WireFormat?]][] = [
    ["getGenesis", () => ["getGenesis", {}]],
    ["getSpec", () => ["getSpec", {}]],
    ["getForkSchedule", () => ["getForkSchedule", {}]],
    ["getNodeVersion", () => ["getNodeVersion", {}]],
    ["getHealth", () => ["getHealth", {}]],
    ["getStateFinalityCheckpoints", () => ["getStateFinalityCheckpoints", {stateId: "finalized"}]],
    ["getStateValidators with filters", () => ["getStateValidators", {stateId: "head", id: [1, pubkey(2)], status: ["active"]}]],
    ["postStateValidators", () => ["postStateValidators", {stateId: 0, filter: {ids: [pubkey(3)], statuses: []}}]],
    ["getStateValidator (404)", () => ["getStateValidator", {stateId: "head", validatorId: 999}]],
    ["getStateRoot of a malformed id (400)", () => ["getStateRoot", {stateId: "current"}]],
    ["getBlockHeaders", () => ["getBlockHeaders", {slot: 0}]],
    ["getBlockV2 as JSON", () => ["getBlockV2", {blockId: "head"}]],
    ["getBlockV2 as SSZ", () => ["getBlockV2", {blockId: "genesis"}, "ssz"]],
    ["getProposerDuties", () => ["getProposerDuties", {epoch: 1}]],
    ["getAttesterDuties", () => ["getAttesterDuties", {epoch: 0, validators: [0, 5, pubkey(9)]}]],
    ["getSyncCommitteeDuties", () => ["getSyncCommitteeDuties", {epoch: 0, indices: [0, 1, 2, 3, 4, 5, 6, 7]}]],
    ["produceBlockV3 as JSON", () => ["produceBlockV3", {slot: 1, randaoReveal: RANDAO, graffiti: new Uint8Array(32).fill(1)}]],
    ["produceBlockV3 as SSZ", () => ["produceBlockV3", {slot: 1, randaoReveal: RANDAO}, "ssz"]],
    ["produceBlockV2", () => ["produceBlockV2", {slot: 1, randaoReveal: RANDAO}]],
    ["produceAttestationData as SSZ", () => ["produceAttestationData", {slot: 0, committeeIndex: 0}, "ssz"]],
    ["getAggregatedAttestationV2 as SSZ", () => ["getAggregatedAttestationV2", {attestationDataRoot: new Uint8Array(32), slot: 1, committeeIndex: 0}, "ssz"]],
    ["submitPoolAttestationsV2 with a failure", () => ["submitPoolAttestationsV2", {attestations: [singleAttestation(1), singleAttestation(REJECTED_SLOT)], fork: ForkName.fulu}]],
    ["submitPoolAttestationsV2 as SSZ", () => ["submitPoolAttestationsV2", {attestations: [singleAttestation(1)], fork: ForkName.fulu}, "ssz"]],
    ["publishBlockV2 as SSZ", () => ["publishBlockV2", {signedBlockContents: {signedBlock: ssz.fulu.SignedBeaconBlock.defaultValue(), kzgProofs: [], blobs: []}, fork: ForkName.fulu}, "ssz"]],
  ];

  it.each(calls)("%s", async (_name, call) => {
    const [id, args, format] = call();
    const overHttp = await outcome(http, id, args as never, format);
    const inProcess = await outcome(local, id, args as never, format);
    expect(inProcess).toEqual(overHttp);
  });

  it("decodes SSZ and JSON answers to the same values", async () => {
    const json = await local.request("getBlockV2", {blockId: "head"});
    const bytes = await http.request("getBlockV2", {blockId: "head"}, {format: "ssz"});
    expect(bytes.meta.version).toBe("fulu");
    expect(ssz.fulu.SignedBeaconBlock.toJson(bytes.data as never)).toEqual(ssz.fulu.SignedBeaconBlock.toJson(json.data as never));
  });

  it("throws ApiClientError with the status, message and failures", async () => {
    const err = await local.request("submitPoolAttestationsV2", {attestations: [singleAttestation(REJECTED_SLOT)], fork: ForkName.fulu}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiClientError);
    expect(err).toMatchObject({status: 400, code: 400, failures: [{index: 0, message: `rejected: slot ${REJECTED_SLOT}`}]});
  });
});

describe("the validator client's API over the route client", () => {
  it.each([["in-process", () => local], ["HTTP", () => http]])("works %s", async (_name, client) => {
    const api = createValidatorBeaconApi(client());
    const genesis = await api.getGenesis();
    expect(genesis.genesisTime).toBe(t.state.genesisTime);
    expect((await api.getSpec()).SECONDS_PER_SLOT).toBe("2");

    const validators = await api.getValidators([pubkey(4), pubkey(6)]);
    expect(validators).toEqual([
      {index: 4, pubkey: pubkey(4), status: "active_ongoing"},
      {index: 6, pubkey: pubkey(6), status: "active_ongoing"},
    ]);

    const proposer = await api.getProposerDuties(0);
    expect(proposer.dependentRoot).toEqual(t.chain.genesisRoot);
    expect(proposer.duties[0]).toMatchObject({slot: 1});
    const attester = await api.getAttesterDuties(0, [0, 1]);
    expect(attester.duties.map((d) => d.validatorIndex).sort()).toEqual([0, 1]);
    expect(await api.getBlockRoot("head")).toEqual(t.chain.genesisRoot);

    const {block, fork, blobs} = await api.produceBlock(1, RANDAO);
    expect(fork).toBe("fulu");
    expect(block.slot).toBe(1);
    expect(blobs).toEqual({blobs: [], kzgProofs: []});
    const before = t.chain.imported.length;
    await api.publishBlock({message: block, signature: new Uint8Array(96)}, fork, blobs);
    expect(t.chain.imported).toHaveLength(before + 1);

    await expect(api.submitAttestations([singleAttestation(REJECTED_SLOT)], ForkName.fulu)).rejects.toBeInstanceOf(ApiClientError);
    await api.prepareBeaconProposer([{validatorIndex: 8, feeRecipient: new Uint8Array(20).fill(9)}]);
    expect(t.feeRecipients.get(8)).toEqual(new Uint8Array(20).fill(9));
  });
});

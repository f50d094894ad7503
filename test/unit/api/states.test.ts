import {prng} from "../../../bench/seededRandom.ts";
import {beforeAll, describe, expect, it} from "@jest/globals";
import {ListCompositeType} from "@chainsafe/ssz";
import {EPOCHS_PER_SYNC_COMMITTEE_PERIOD, SYNC_COMMITTEE_SIZE, VALIDATOR_REGISTRY_LIMIT} from "@lodestar/params";
import {type CachedBeaconStateElectra, type CachedBeaconStateFulu, processSlots} from "@lodestar/state-transition";
import {ssz} from "@lodestar/types";
import {toHex} from "@lodestar/utils";
import request from "supertest";
import {CommitteeType, ValidatorBalanceType, ValidatorIdentityType, writeCommittee} from "../../../src/api/routes/states.ts";
import {writtenList} from "../../../src/api/asciiJson.ts";
import {BalanceList} from "../../../src/api/balanceList.ts";
import {createApp} from "../../../src/api/server/index.ts";
import {createTestContext, type TestContext} from "./testContext.ts";
import {binary} from "./binary.ts";

let t: TestContext;
let app: ReturnType<typeof createApp>;
/** a state at slot 3 whose electra queues hold one entry each */
let queued: CachedBeaconStateElectra;
const QUEUED_SLOT = 3;

const pendingDeposit = {
  pubkey: new Uint8Array(48).fill(7),
  withdrawalCredentials: new Uint8Array(32).fill(1),
  amount: 1_000_000_000,
  signature: new Uint8Array(96).fill(2),
  slot: 2,
};
const pendingWithdrawal = {validatorIndex: 5, amount: 123n, withdrawableEpoch: 9};
const pendingConsolidation = {sourceIndex: 4, targetIndex: 6};

beforeAll(() => {
  t = createTestContext();
  app = createApp({}, t.ctx);
  queued = processSlots(t.state.clone(), QUEUED_SLOT) as CachedBeaconStateElectra;
  queued.pendingDeposits.push(ssz.electra.PendingDeposit.toViewDU(pendingDeposit));
  queued.pendingPartialWithdrawals.push(ssz.electra.PendingPartialWithdrawal.toViewDU(pendingWithdrawal));
  queued.pendingConsolidations.push(ssz.electra.PendingConsolidation.toViewDU(pendingConsolidation));
  queued.commit();
  t.chain.addState(queued);
  t.chain.slot = QUEUED_SLOT;
});

const pubkeyHex = (i: number) => toHex(t.state.validators.getReadonly(i).pubkey);
const indices = (body: {data: {index: string}[]}) => body.data.map((v) => v.index);


describe("validator balances", () => {
  it("getStateValidatorBalances lists every balance of the state", async () => {
    const res = await request(app).get("/eth/v1/beacon/states/head/validator_balances").expect(200);
    const expected = Array.from({length: 64}, (_, i) => ({index: String(i), balance: String(t.state.balances.get(i))}));
    expect(res.body).toEqual({execution_optimistic: false, finalized: true, data: expected});
  });

  it("getStateValidatorBalances filters by index and public key, ignoring unknown validators", async () => {
    const res = await request(app).get(`/eth/v1/beacon/states/head/validator_balances?id=3,${pubkeyHex(9)}&id=9999`).expect(200);
    expect(res.body.data).toEqual([
      {index: "3", balance: "32000000000"},
      {index: "9", balance: "32000000000"},
    ]);
  });

  it("getStateValidatorBalances: 400 for a malformed id, 414 for more than 64", async () => {
    expect((await request(app).get("/eth/v1/beacon/states/head/validator_balances?id=abc").expect(400)).body).toEqual({code: 400, message: "Invalid validator ID: abc"});
    const ids = Array.from({length: 65}, (_, i) => i).join(",");
    await request(app).get(`/eth/v1/beacon/states/head/validator_balances?id=${ids}`).expect(414);
  });

  it("postStateValidatorBalances takes the ids in the body; no body, null or [] mean every validator", async () => {
    const some = await request(app).post("/eth/v1/beacon/states/head/validator_balances").send(["1", pubkeyHex(2)]).expect(200);
    expect(indices(some.body)).toEqual(["1", "2"]);
    for (const body of [undefined, [], null]) {
      const req = request(app).post("/eth/v1/beacon/states/head/validator_balances");
      const res = await (body === undefined ? req : req.set("Content-Type", "application/json").send(JSON.stringify(body))).expect(200);
      expect(res.body.data).toHaveLength(64);
    }
  });

  it("postStateValidatorBalances rejects malformed bodies with 400", async () => {
    const bad = await request(app).post("/eth/v1/beacon/states/head/validator_balances").send(["0x12"]).expect(400);
    expect(bad.body.message).toMatch(/^Invalid request body: invalid validator ids item 0/);
    await request(app).post("/eth/v1/beacon/states/head/validator_balances").send({ids: ["1"]}).expect(400);
    await request(app).post("/eth/v1/beacon/states/head/validator_balances").set("Content-Type", "application/json").send("[1,").expect(400);
  });
});

describe("validator identities", () => {
  it("postStateValidatorIdentities gives index, public key and activation epoch", async () => {
    const res = await request(app).post("/eth/v1/beacon/states/head/validator_identities").send(["7", pubkeyHex(8), "12345"]).expect(200);
    expect(res.body).toEqual({
      execution_optimistic: false,
      finalized: true,
      data: [7, 8].map((i) => ({index: String(i), pubkey: pubkeyHex(i), activation_epoch: String(t.state.validators.getReadonly(i).activationEpoch)})),
    });
    const all = await request(app).post("/eth/v1/beacon/states/head/validator_identities").expect(200);
    expect(all.body.data).toHaveLength(64);
  });

  it("serves SSZ: the list of ValidatorIdentity", async () => {
    const res = await binary(request(app).post("/eth/v1/beacon/states/head/validator_identities").set("Accept", "application/octet-stream").send(["0", "1"])).expect(200);
    expect(res.headers["content-type"]).toBe("application/octet-stream");
    const list = new ListCompositeType(ValidatorIdentityType, VALIDATOR_REGISTRY_LIMIT).deserialize(new Uint8Array(res.body));
    expect(list.map((v) => [v.index, toHex(v.pubkey), v.activationEpoch])).toEqual([
      [0, pubkeyHex(0), 0],
      [1, pubkeyHex(1), 0],
    ]);
  });

  it("rejects a malformed body with 400", async () => {
    await request(app).post("/eth/v1/beacon/states/head/validator_identities").send(["-1"]).expect(400);
  });
});

describe("committees", () => {
  /** The committees of an epoch from a state's epoch cache (the genesis state's by default), in the API's JSON form. */
  function expectedCommittees(epoch: number, ctx = t.state.epochCtx) {
    const perSlot = ctx.getCommitteeCountPerSlot(epoch);
    return Array.from({length: 8}, (_, s) => epoch * 8 + s).flatMap((slot) =>
      Array.from({length: perSlot}, (_, index) => ({index: String(index), slot: String(slot), validators: Array.from(ctx.getBeaconCommittee(slot, index), String)}))
    );
  }

  it("lists written in turns, or one that fails half-way, leave nothing in each other's text", () => {
    const one = new BalanceList([1, 2, 3]).jsonPieces(8)[Symbol.iterator]();
    const two = new BalanceList([7, 8]).jsonPieces(8)[Symbol.iterator]();
    const pieces: Uint8Array[][] = [[], []];
    for (let done = 0; done < 2; ) {
      done = 0;
      for (const [i, it] of [one, two].entries()) {
        const next = it.next();
        if (next.done) done++;
        else pieces[i].push(next.value);
      }
    }
    expect(Buffer.concat(pieces[0]).toString()).toBe(JSON.stringify([1, 2, 3].map((balance, index) => ValidatorBalanceType.toJson({index, balance}))));
    expect(Buffer.concat(pieces[1]).toString()).toBe(JSON.stringify([7, 8].map((balance, index) => ValidatorBalanceType.toJson({index, balance}))));
    const failing = writtenList([1, 2, 3], (out, n) => {
      if (n === 3) throw new Error("item 3");
      out.quotedUint(n);
    });
    expect(() => [...failing]).toThrow("item 3");
    expect([...new BalanceList([5]).jsonPieces()].join("")).toBe('[{"index":"0","balance":"5"}]');
  });

  it("a balance list's JSON text is exactly what ssz toJson and JSON.stringify give, however it is cut into pieces", () => {
    const random = prng(9);
    const uint = (): number => (random() < 0.1 ? [0, 9, 10, 2 ** 31, 2 ** 53 - 1, Infinity][Math.floor(random() * 6)] : Math.floor(random() * 10 ** Math.floor(random() * 16)));
    for (let round = 0; round < 60; round++) {
      const length = round === 0 ? 0 : Math.floor(random() * 300);
      const balances = Array.from({length}, uint);
      const indices = round % 2 === 0 ? undefined : Array.from({length}, uint);
      const list = new BalanceList(balances, indices);
      const items = balances.map((balance, i) => ({index: indices ? indices[i] : i, balance}));
      expect([...list]).toEqual(items);
      const pieces = [...list.jsonPieces(1 + Math.floor(random() * 200))];
      expect(pieces.join("")).toBe(JSON.stringify(items.map((b) => ValidatorBalanceType.toJson(b))));
      expect([...BalanceList.of(items).jsonPieces()].join("")).toBe(pieces.join(""));
    }
  });

  it("a committee's JSON text is exactly what ssz toJson and JSON.stringify give", () => {
    const random = prng(5);
    const seeded = Array.from({length: 50}, (_, i) => ({
      index: i,
      slot: Math.floor(random() * 2 ** 40),
      validators: Array.from({length: Math.floor(random() * 600)}, () => Math.floor(random() * 10 ** Math.floor(random() * 16))),
    }));
    for (const c of [
      ...seeded,
      {index: 0, slot: 0, validators: []},
      {index: 63, slot: 123456789, validators: [0]},
      {index: 5, slot: 7, validators: [999_999, 1, 2 ** 32 - 1, 42]},
    ]) {
      expect([...writtenList([c], writeCommittee, 1 + Math.floor(random() * 3000))].join("")).toBe(JSON.stringify([CommitteeType.toJson(c)]));
    }
  });

  it("getEpochCommittees gives every committee of the state's epoch, each validator in exactly one", async () => {
    const res = await request(app).get("/eth/v1/beacon/states/head/committees").expect(200);
    expect(res.body).toEqual({execution_optimistic: false, finalized: true, data: expectedCommittees(0)});
    const members = res.body.data.flatMap((c: {validators: string[]}) => c.validators).map(Number).sort((a: number, b: number) => a - b);
    expect(members).toEqual(Array.from({length: 64}, (_, i) => i));
  });

  it("getEpochCommittees answers for the next epoch and filters by slot and index", async () => {
    const next = await request(app).get("/eth/v1/beacon/states/head/committees?epoch=1").expect(200);
    expect(next.body.data).toEqual(expectedCommittees(1));
    const filtered = await request(app).get("/eth/v1/beacon/states/head/committees?epoch=1&slot=10&index=1").expect(200);
    expect(filtered.body.data).toEqual(expectedCommittees(1).filter((c) => c.slot === "10" && c.index === "1"));
    const bySlot = await request(app).get("/eth/v1/beacon/states/head/committees?slot=3").expect(200);
    expect(bySlot.body.data.map((c: {slot: string}) => c.slot)).toEqual(["3", "3"]);
  });

  it("getEpochCommittees answers for every past epoch the state's RANDAO mixes cover, as each epoch's own state computed them", async () => {
    const later = processSlots(t.state.clone(), 5 * 8 + 3);
    t.chain.addState(later);
    const clockSlot = t.chain.slot;
    t.chain.slot = later.slot;
    for (const epoch of [0, 1, 2, 3]) {
      const atEpoch = epoch === 0 ? t.state : processSlots(t.state.clone(), epoch * 8);
      const res = await request(app).get(`/eth/v1/beacon/states/${later.slot}/committees?epoch=${epoch}`).expect(200);
      expect(res.body.data).toEqual(expectedCommittees(epoch, atEpoch.epochCtx));
    }
    // the next epoch's seed is final; the one after depends on RANDAO reveals still to come
    expect((await request(app).get(`/eth/v1/beacon/states/${later.slot}/committees?epoch=6`).expect(200)).body.data).toEqual(expectedCommittees(6, later.epochCtx));
    const far = await request(app).get(`/eth/v1/beacon/states/${later.slot}/committees?epoch=7`).expect(400);
    expect(far.body.message).toBe("Epoch 7 is out of the range the state's RANDAO mixes cover (epochs 0 to 6 for a state at epoch 5)");
    t.chain.slot = clockSlot;
  });

  it("getEpochCommittees: 400 for an epoch past the next, malformed numbers; a slot outside the epoch matches no committee", async () => {
    const far = await request(app).get("/eth/v1/beacon/states/head/committees?epoch=2").expect(400);
    expect(far.body.message).toBe("Epoch 2 is out of the range the state's RANDAO mixes cover (epochs 0 to 1 for a state at epoch 0)");
    // the spec's `slot` restricts the answer to that slot's committees: outside the epoch there are none (a filter, as `index`)
    expect((await request(app).get("/eth/v1/beacon/states/head/committees?epoch=0&slot=9").expect(200)).body.data).toEqual([]);
    expect((await request(app).get("/eth/v1/beacon/states/head/committees?slot=18446744073709551615").expect(200)).body.data).toEqual([]);
    expect((await request(app).get("/eth/v1/beacon/states/head/committees?index=18446744073709551615").expect(200)).body.data).toEqual([]);
    expect((await request(app).get("/eth/v1/beacon/states/head/committees?epoch=x").expect(400)).body).toEqual({code: 400, message: "Invalid epoch: x"});
    await request(app).get("/eth/v1/beacon/states/head/committees?index=-1").expect(400);
    await request(app).get("/eth/v1/beacon/states/head/committees?slot=18446744073709551616").expect(400);
  });
});

describe("sync committees", () => {
  const indexOf = (pubkey: Uint8Array) => t.state.epochCtx.getValidatorIndex(pubkey);
  const expected = (committee: {toValue(): {pubkeys: Uint8Array[]}}) => {
    const validators = committee.toValue().pubkeys.map((pk) => String(indexOf(pk)));
    return {validators, validator_aggregates: [0, 1, 2, 3].map((i) => validators.slice(i * 8, i * 8 + 8))};
  };

  it("getEpochSyncCommittees gives the current committee by index, in four subnet slices", async () => {
    const res = await request(app).get("/eth/v1/beacon/states/head/sync_committees").expect(200);
    expect(res.body).toEqual({execution_optimistic: false, finalized: true, data: expected((t.state as CachedBeaconStateFulu).currentSyncCommittee)});
    expect(res.body.data.validators).toHaveLength(SYNC_COMMITTEE_SIZE);
  });

  it("getEpochSyncCommittees gives the next period's committee, and 400 beyond it", async () => {
    const next = await request(app).get(`/eth/v1/beacon/states/head/sync_committees?epoch=${EPOCHS_PER_SYNC_COMMITTEE_PERIOD}`).expect(200);
    expect(next.body.data).toEqual(expected((t.state as CachedBeaconStateFulu).nextSyncCommittee));
    const far = await request(app).get(`/eth/v1/beacon/states/head/sync_committees?epoch=${2 * EPOCHS_PER_SYNC_COMMITTEE_PERIOD}`).expect(400);
    expect(far.body.message).toMatch(/^Epoch 16 is outside the sync committee periods of the state/);
    await request(app).get("/eth/v1/beacon/states/head/sync_committees?epoch=1.5").expect(400);
  });
});

describe("randao", () => {
  it("getStateRandao gives the mix of the state's epoch, or of an earlier epoch", async () => {
    const res = await request(app).get("/eth/v1/beacon/states/head/randao").expect(200);
    expect(res.body).toEqual({execution_optimistic: false, finalized: true, data: {randao: toHex(t.state.randaoMixes.get(0))}});
    expect((await request(app).get("/eth/v1/beacon/states/head/randao?epoch=0").expect(200)).body).toEqual(res.body);
  });

  it("getStateRandao: 400 for a future epoch or a malformed one", async () => {
    expect((await request(app).get("/eth/v1/beacon/states/head/randao?epoch=1").expect(400)).body.message).toMatch(/^Epoch 1 is out of range for the randao_mixes/);
    await request(app).get("/eth/v1/beacon/states/head/randao?epoch=abc").expect(400);
  });
});

describe("electra queues and the proposer lookahead", () => {
  const queues = [
    ["pending_deposits", ssz.electra.PendingDeposits, pendingDeposit],
    ["pending_partial_withdrawals", ssz.electra.PendingPartialWithdrawals, pendingWithdrawal],
    ["pending_consolidations", ssz.electra.PendingConsolidations, pendingConsolidation],
  ] as const;

  it.each(queues)("%s: the state's list with its version, in JSON", async (path, type, entry) => {
    const res = await request(app).get(`/eth/v1/beacon/states/${QUEUED_SLOT}/${path}`).expect(200);
    expect(res.headers["eth-consensus-version"]).toBe("fulu");
    expect(res.body).toEqual({version: "fulu", execution_optimistic: false, finalized: false, data: (type.toJson as (v: unknown) => unknown)([entry])});
    const empty = await request(app).get(`/eth/v1/beacon/states/head/${path}`).expect(200);
    expect(empty.body.data).toEqual([]);
  });

  it.each(queues)("%s: SSZ is the state's list serialized", async (path, type, entry) => {
    const res = await binary(request(app).get(`/eth/v1/beacon/states/${QUEUED_SLOT}/${path}`).set("Accept", "application/octet-stream")).expect(200);
    expect(res.headers["eth-consensus-version"]).toBe("fulu");
    expect(new Uint8Array(res.body)).toEqual((type.serialize as (v: unknown) => Uint8Array)([entry]));
  });

  it("getProposerLookahead gives the state's lookahead (JSON and SSZ)", async () => {
    const lookahead = (t.state as CachedBeaconStateFulu).proposerLookahead.getAll();
    const res = await request(app).get("/eth/v1/beacon/states/head/proposer_lookahead").expect(200);
    expect(res.body).toEqual({version: "fulu", execution_optimistic: false, finalized: true, data: lookahead.map(String)});
    expect(lookahead).toHaveLength(16);
    const bytes = await binary(request(app).get("/eth/v1/beacon/states/head/proposer_lookahead").set("Accept", "application/octet-stream")).expect(200);
    expect(ssz.fulu.ProposerLookahead.deserialize(new Uint8Array(bytes.body))).toEqual(lookahead);
  });

  it("answers 400 for a state before electra (and before fulu for the lookahead)", async () => {
    const deneb = createTestContext(64, "deneb");
    const denebApp = createApp({}, deneb.ctx);
    for (const path of ["pending_deposits", "pending_partial_withdrawals", "pending_consolidations", "proposer_lookahead"]) {
      const res = await request(denebApp).get(`/eth/v1/beacon/states/head/${path}`).expect(400);
      expect(res.body.message).toMatch(/^The state is at fork deneb, before (electra|fulu): it has no /);
    }
    const electra = createTestContext(64, "electra");
    await request(createApp({}, electra.ctx)).get("/eth/v1/beacon/states/head/pending_deposits").expect(200);
    await request(createApp({}, electra.ctx)).get("/eth/v1/beacon/states/head/proposer_lookahead").expect(400);
  });
});

describe("every state route", () => {
  const routes = [
    ["GET", "validator_balances"],
    ["POST", "validator_balances"],
    ["POST", "validator_identities"],
    ["GET", "committees"],
    ["GET", "sync_committees"],
    ["GET", "randao"],
    ["GET", "pending_deposits"],
    ["GET", "pending_partial_withdrawals"],
    ["GET", "pending_consolidations"],
    ["GET", "proposer_lookahead"],
  ] as const;
  const call = (method: "GET" | "POST", url: string) => (method === "GET" ? request(app).get(url) : request(app).post(url).send([]));

  it.each(routes)("%s %s: 404 for an unknown state, 400 for a malformed state id", async (method, path) => {
    expect((await call(method, `/eth/v1/beacon/states/0x${"ab".repeat(32)}/${path}`).expect(404)).body).toEqual({code: 404, message: "State not found"});
    expect((await call(method, "/eth/v1/beacon/states/100/" + path).expect(404)).body.code).toBe(404);
    expect((await call(method, `/eth/v1/beacon/states/current/${path}`).expect(400)).body).toEqual({code: 400, message: "Invalid state ID: current"});
  });
});

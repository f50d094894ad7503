import {afterAll, describe, expect, it} from "@jest/globals";
import {SecretKey, Signature, aggregateSignatures} from "@chainsafe/blst";
import {type ISignatureSet, SignatureSetType, createPubkeyCache} from "@lodestar/state-transition";
import {BlsWorkerPool} from "../../../src/bls/workerPool.ts";
import {verifyOnThisThread, serializeSet} from "../../../src/bls/verifier.ts";
import {verifyJobs} from "../../../src/bls/verifyJobs.ts";
import {LoopTurns} from "../../../src/loopTurns.ts";
import {turnCounter} from "../turnCounter.ts";

/**
 * BLS checks on worker threads, against real keys and signatures: the same verdicts as blst on
 * the calling thread, one bad signature failing only the job that sent it, however jobs are batched.
 */

const keys = Array.from({length: 8}, (_, i) => SecretKey.fromKeygen(new Uint8Array(32).fill(i + 1)));
const pubkeyCache = createPubkeyCache();
keys.forEach((sk, i) => pubkeyCache.set(i, sk.toPublicKey().toBytes()));
const root = (n: number) => new Uint8Array(32).fill(n);

/** a set signed by validator `i` over root `n` (indexed: its key comes from the cache) */
const indexed = (i: number, n: number): ISignatureSet => ({type: SignatureSetType.indexed, index: i, signingRoot: root(n), signature: keys[i].sign(root(n)).toBytes()});
/** an aggregate set: validators `indices` all over root `n` */
const aggregate = (indices: number[], n: number): ISignatureSet => ({
  type: SignatureSetType.aggregate,
  indices,
  signingRoot: root(n),
  signature: aggregateSignatures(indices.map((i) => keys[i].sign(root(n)))).toBytes(),
});
const wrongSigner = (i: number, n: number): ISignatureSet => ({...indexed(i, n), signature: keys[(i + 1) % keys.length].sign(root(n)).toBytes()});
const malformed = (i: number, n: number): ISignatureSet => ({...indexed(i, n), signature: new Uint8Array(96).fill(0xaa)});

describe.each([2, 0])("BLS worker pool with %i threads (0: batches checked on this thread)", (threads) => {
  const pool = new BlsWorkerPool(threads);
  afterAll(() => pool.close());

  it("gives the verdicts blst gives on this thread: valid, wrong signer, malformed, unknown validator", async () => {
    const cases: ISignatureSet[][] = [[indexed(0, 1)], [indexed(1, 2), indexed(2, 3), aggregate([3, 4, 5], 4)], [wrongSigner(0, 1)], [indexed(1, 2), malformed(2, 3)], [{type: SignatureSetType.indexed, index: 99, signingRoot: root(1), signature: keys[0].sign(root(1)).toBytes()}], []];
    const expected = [true, true, false, false, false, true];
    for (const [i, sets] of cases.entries()) {
      expect(await pool.verify(sets, pubkeyCache)).toBe(expected[i]);
      expect(await verifyOnThisThread.verify(sets, pubkeyCache)).toBe(expected[i]);
    }
  });

  it("jobs sent in one turn are checked together, and a bad one fails only itself", async () => {
    const jobs = [[indexed(0, 1)], [wrongSigner(1, 2)], [indexed(2, 3), indexed(3, 3)], [malformed(4, 4)], [aggregate([5, 6, 7], 5)]];
    const verdicts = await Promise.all(jobs.map((sets) => pool.verify(sets, pubkeyCache)));
    expect(verdicts).toEqual([true, false, true, false, true]);
  });

  it("many concurrent jobs, more than one batch holds, all answered right", async () => {
    const jobs = Array.from({length: 300}, (_, j) => (j % 37 === 5 ? [wrongSigner(j % 8, j)] : [indexed(j % 8, j)]));
    const verdicts = await Promise.all(jobs.map((sets) => pool.verify(sets, pubkeyCache)));
    expect(verdicts).toEqual(jobs.map((_, j) => j % 37 !== 5));
  });

});

describe("the workers' key table: sets go to the workers as their signers' validator indices", () => {
  const pool = new BlsWorkerPool(1);
  afterAll(() => pool.close());

  it("a worker reads keys written after it started, past the table's first growth, for single and aggregate sets", async () => {
    const cache = createPubkeyCache();
    // far apart: the table grows (by 65,536 keys at least) after the worker has its view of it
    const farIndices = [3, 70_000, 200_000, 1_000_000];
    farIndices.forEach((index, k) => cache.set(index, keys[k].toPublicKey().toBytes()));
    const at = (index: number, k: number, n: number): ISignatureSet => ({type: SignatureSetType.indexed, index, signingRoot: root(n), signature: keys[k].sign(root(n)).toBytes()});
    expect(await pool.verify([at(3, 0, 1)], cache)).toBe(true);
    expect(await pool.verify([at(1_000_000, 3, 2), at(70_000, 1, 2)], cache)).toBe(true);
    // 200,000 holds key 2, not key 1
    expect(await pool.verify([at(200_000, 1, 3)], cache)).toBe(false);
    const sum = aggregateSignatures([0, 1, 2, 3].map((k) => keys[k].sign(root(4)))).toBytes();
    expect(await pool.verify([{type: SignatureSetType.aggregate, indices: farIndices, signingRoot: root(4), signature: sum}], cache)).toBe(true);
    expect(await pool.verify([{type: SignatureSetType.aggregate, indices: farIndices.slice(1), signingRoot: root(4), signature: sum}], cache)).toBe(false);
    // an index the cache does not hold: nothing to verify against
    expect(await pool.verify([at(5, 0, 5)], cache)).toBe(false);
  });

  it("a second key cache (another index-to-key mapping) is not read through the first one's table", async () => {
    // the first cache seen by this pool was the test's above; here index 3 is key 5's
    const other = createPubkeyCache();
    other.set(3, keys[5].toPublicKey().toBytes());
    const byKey5 = {type: SignatureSetType.indexed, index: 3, signingRoot: root(6), signature: keys[5].sign(root(6)).toBytes()} as const;
    expect(await pool.verify([byKey5], other)).toBe(true);
    expect(await verifyOnThisThread.verify([byKey5], other)).toBe(true);
  });
});

describe("BLS worker pool, full batches", () => {
  const pool = new BlsWorkerPool(1);
  afterAll(() => pool.close());

  it("go to the worker as soon as they are queued, several at once, without a turn of the event loop; a partial one waits for an idle worker", async () => {
    // five batches' worth (128 sets each), submitted in one stretch of this thread: a held event loop
    const jobs = Array.from({length: 5 * 128}, (_, j) => (j % 97 === 3 ? [wrongSigner(j % 8, j)] : [indexed(j % 8, j)]));
    const verdicts = jobs.map((sets) => pool.verify(sets, pubkeyCache));
    // the worker has all five already, so it goes from one to the next while this thread is busy
    expect(pool.batchesInFlight).toBe(5);
    // a few more, not a batch: they wait for the worker to be idle, and join whatever comes meanwhile
    const more = [pool.verify([indexed(1, 1000)], pubkeyCache), pool.verify([wrongSigner(2, 1001)], pubkeyCache)];
    expect(pool.batchesInFlight).toBe(5);
    expect(await Promise.all(verdicts)).toEqual(jobs.map((_, j) => j % 97 !== 3));
    expect(await Promise.all(more)).toEqual([true, false]);
    expect(pool.batchesInFlight).toBe(0);
  });

  it("a priority job (a block's) goes to a busy worker at once, ahead of the queue's waiting jobs, and is answered before them", async () => {
    // ten batches' worth: eight posted (the most a worker holds), two waiting in the queue
    const jobs = Array.from({length: 10 * 128}, (_, j) => [indexed(j % 8, j)]);
    const answered: string[] = [];
    const verdicts = jobs.map((sets, j) => pool.verify(sets, pubkeyCache).then((v) => (answered.push(`gossip ${j}`), v)));
    expect(pool.batchesInFlight).toBe(8);
    const block = pool.verify([indexed(3, 5000), aggregate([0, 1, 2], 5001)], pubkeyCache, {priority: true}).then((v) => (answered.push("block"), v));
    // no room at the worker: it waits at the front of the queue, and goes with the next batch posted
    expect(pool.batchesInFlight).toBe(8);
    const badBlock = pool.verify([wrongSigner(4, 5002)], pubkeyCache, {priority: true}).then((v) => (answered.push("bad block"), v));
    expect(await block).toBe(true);
    expect(await badBlock).toBe(false);
    expect(await Promise.all(verdicts)).toEqual(jobs.map(() => true));
    // answered after the eight batches the worker held, before the two that waited in the queue
    expect(answered.indexOf("block")).toBeGreaterThanOrEqual(8 * 128);
    expect(answered.indexOf("block")).toBeLessThan(answered.indexOf("gossip 1024"));
    expect(answered.indexOf("bad block")).toBeLessThan(answered.indexOf("gossip 1024"));
  });

  it("a priority job on an idle pool goes at once, in a batch of its own", async () => {
    const verdict = pool.verify([indexed(5, 6000)], pubkeyCache, {priority: true});
    expect(pool.batchesInFlight).toBe(1);
    expect(await verdict).toBe(true);
  });
});

describe("BLS checks on the event loop", () => {
  it("are steps of the node's LoopTurns: queued behind its other work, never in the same turn as a step that used up the budget", async () => {
    let clockMs = 0;
    const turns = new LoopTurns(5, () => clockMs);
    const pool = new BlsWorkerPool(0, turns);
    const order: string[] = [];
    const turn = turnCounter();
    const signing = turns.run(() => {
      clockMs += 6;
      order.push("signing");
      return turn.now();
    });
    const checked = pool.verify([indexed(0, 1)], pubkeyCache).then((valid) => (order.push("check"), {valid, turn: turn.now()}));
    const [signedAt, check] = await Promise.all([signing, checked]);
    turn.stop();
    await pool.close();
    expect(order).toEqual(["signing", "check"]);
    expect(check.valid).toBe(true);
    expect(check.turn).toBeGreaterThan(signedAt);
  });
});

describe("BLS checks on the event loop, by their expected cost", () => {
  it("a batch of many sets does not start in a turn that has already run signing, a small one does", async () => {
    // the turn's clock is the test's: signing takes exactly 5.5 ms of a 7 ms budget, whatever the machine's load
    let clockMs = 0;
    const turns = new LoopTurns(7, () => clockMs);
    const pool = new BlsWorkerPool(0, turns);
    const turn = turnCounter();
    const signing = () =>
      turns.run(() => {
        clockMs += 5.5;
        return turn.now();
      });
    try {
      // 1.5 ms left: one set (0.45 ms expected before any is timed) fits, a batch of 6 (0.4 ms or more each) does not
      const [signedBeforeSmall, small] = await Promise.all([signing(), pool.verify([indexed(0, 1)], pubkeyCache).then(() => turn.now())]);
      expect(small).toBe(signedBeforeSmall);
      const [signedBeforeLarge, large] = await Promise.all([signing(), Promise.all(Array.from({length: 6}, (_, j) => pool.verify([indexed(j % 8, j)], pubkeyCache))).then(() => turn.now())]);
      expect(large).toBeGreaterThan(signedBeforeLarge);
    } finally {
      turn.stop();
      await pool.close();
    }
  });
});

describe("BLS checks on the event loop, sized to the turn", () => {
  it("a batch holds as many sets as the budget at their measured cost, so a queue of checks is spread over turns", async () => {
    // a set costs 0.4 ms or more here: a 1 ms budget holds 1 or 2 of them, never the 6 of a larger budget
    const turns = new LoopTurns(1);
    const pool = new BlsWorkerPool(0, turns);
    const turn = turnCounter();
    try {
      const checkedAt = await Promise.all(Array.from({length: 6}, (_, j) => pool.verify([indexed(j % 8, j)], pubkeyCache).then(() => turn.now())));
      expect(new Set(checkedAt).size).toBeGreaterThanOrEqual(3);
    } finally {
      turn.stop();
      await pool.close();
    }
  });
});

describe("BLS worker pool lifecycle", () => {
  it("a closed pool refuses new work", async () => {
    const closing = new BlsWorkerPool(1);
    await closing.close();
    await expect(closing.verify([indexed(0, 1)], pubkeyCache)).rejects.toThrow(/closed/);
  });
});

describe("the worker's batch check (verifyJobs)", () => {
  const serialized = (sets: ISignatureSet[]) => sets.map((s) => serializeSet(s, pubkeyCache));
  it("all good: all true; one bad job among good ones: only it false; a lone bad job: false", () => {
    expect(verifyJobs([serialized([indexed(0, 1)]), serialized([indexed(1, 2), indexed(2, 2)])])).toEqual([true, true]);
    expect(verifyJobs([serialized([indexed(0, 1)]), serialized([wrongSigner(1, 2)]), serialized([malformed(2, 3)]), serialized([])])).toEqual([true, false, false, true]);
    expect(verifyJobs([serialized([wrongSigner(0, 1)])])).toEqual([false]);
  });

  it("sets over one message (a committee's attestations) are folded into one pairing, and still each must be valid", () => {
    const committee = [0, 1, 2, 3, 4].map((i) => indexed(i, 7));
    expect(verifyJobs([serialized(committee), serialized([indexed(5, 7), aggregate([6, 7], 7), indexed(6, 8)])])).toEqual([true, true]);
    expect(verifyJobs([serialized(committee), serialized([wrongSigner(5, 7)]), serialized([malformed(6, 7)])])).toEqual([true, false, false]);
    expect(verifyJobs([serialized([...committee, wrongSigner(5, 7)])])).toEqual([false]);
  });

  it("two signatures over one message that are wrong by opposite amounts (S1 + D, S2 - D) fail, though their sum is right", () => {
    const delta = keys[7].sign(root(99));
    // -D: the same message signed by the negated secret key (the group order minus key 7's scalar)
    const order = 0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001n;
    const negatedKey = SecretKey.fromBytes(Buffer.from((order - BigInt("0x" + Buffer.from(keys[7].toBytes()).toString("hex"))).toString(16).padStart(64, "0"), "hex"));
    const minusDelta = negatedKey.sign(root(99));
    const shift = (set: ISignatureSet, sign: 1 | -1): ISignatureSet => {
      const sig = Signature.fromBytes(set.signature);
      const moved = aggregateSignatures([sig, sign === 1 ? delta : minusDelta]);
      return {...set, signature: moved.toBytes()};
    };
    const [a, b] = [indexed(0, 9), indexed(1, 9)];
    const forged = [shift(a, 1), shift(b, -1)];
    // the plain sum of the forged pair is the honest sum: a check without random scalars would pass it
    expect(aggregateSignatures(forged.map((s) => Signature.fromBytes(s.signature))).toBytes()).toEqual(aggregateSignatures([a, b].map((s) => Signature.fromBytes(s.signature))).toBytes());
    expect(verifyJobs([serialized(forged)])).toEqual([false]);
    expect(verifyJobs([serialized([forged[0]]), serialized([forged[1]]), serialized([indexed(2, 9)])])).toEqual([false, false, true]);
  });
});

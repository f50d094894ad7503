import {afterEach, beforeEach, describe, expect, it} from "@jest/globals";
import {readFileSync} from "node:fs";
import {mkdtemp, rm} from "node:fs/promises";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {Ajv} from "ajv";
import {fromHex} from "@lodestar/utils";
import {InterchangeError, interchangeJson, parseInterchange, type ValidatorHistory} from "../../../src/validator/interchange.ts";
import {SlashingProtection} from "../../../src/validator/slashingProtection.ts";

/**
 * The interchange against EIP-3076's text: its JSON schema (vendored with the test cases),
 * its example instance and its conditions, checked by an oracle written from the EIP and
 * from phase0 `is_slashable_attestation_data`, over seeded random histories.
 */

const GVR = "0x04700007fabc8282644aed6d1c7c9e21d38a03a0c4ba193f3afe428824b3a673";
const OTHER_GVR = "0x" + "11".repeat(32);
const PUBKEY = "0xb845089a1457f811bfc000588fbb4e713669be8ce060ea6be3c6ece09afc3794106c91ca73acda5e5457122d58723bed";
const PK = fromHex(PUBKEY);
/** A root no record has: a probe is never a repeat. */
const PROBE_ROOT = new Uint8Array(32).fill(0xee);
const root = (byte: number): string => "0x" + byte.toString(16).padStart(2, "0").repeat(32);
const schema = JSON.parse(readFileSync(new URL("./interchange-cases/schema.json", import.meta.url), "utf8")) as object;

/** The EIP's example JSON instance, verbatim. */
const EIP_EXAMPLE = {
  metadata: {interchange_format_version: "5", genesis_validators_root: GVR},
  data: [
    {
      pubkey: PUBKEY,
      signed_blocks: [{slot: "81952", signing_root: "0x4ff6f743a43f3b4f95350831aeaf0a122a1a392922c45d804280284a69eb850b"}, {slot: "81951"}],
      signed_attestations: [
        {source_epoch: "2290", target_epoch: "3007", signing_root: "0x587d6a4f59a58fe24f406e0502413e77fe1babddee641fda30034ed37ecc884d"},
        {source_epoch: "2290", target_epoch: "3008"},
      ],
    },
  ],
};

interface Vote {
  source: number;
  target: number;
}

/** phase0 is_slashable_attestation_data for two votes of different data: a double vote or a surround either way. */
function slashable(a: Vote, b: Vote): boolean {
  return a.target === b.target || (a.source < b.source && b.target < a.target) || (b.source < a.source && a.target < b.target);
}

/** EIP-3076 conditions 3-5: what an imported history forbids of a new vote (of data unlike any record). */
function fileForbidsVote(file: Vote[], v: Vote): boolean {
  if (file.length === 0) return false;
  return v.source < Math.min(...file.map((f) => f.source)) || v.target <= Math.min(...file.map((f) => f.target)) || file.some((f) => slashable(f, v));
}

/** EIP-3076 conditions 1-2 for a new block (unlike any record). */
function fileForbidsBlock(slots: number[], slot: number): boolean {
  return slots.length > 0 && (slot <= Math.min(...slots) || slots.includes(slot));
}

function rng(seed: number): (n: number) => number {
  let s = seed >>> 0;
  return (n) => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (((t ^ (t >>> 14)) >>> 0) % n);
  };
}

const EPOCHS = 16;
const SLOTS = 24;
const SLOW = 60_000;
const GRID: Vote[] = [];
for (let source = 0; source < EPOCHS; source++) for (let target = source; target < EPOCHS; target++) GRID.push({source, target});

/** Which probe votes and block slots the database refuses now. */
async function refusals(sp: SlashingProtection): Promise<{votes: boolean[]; blocks: boolean[]}> {
  const votes: boolean[] = [];
  for (const v of GRID) votes.push(!(await sp.wouldSignAttestation(PK, {sourceEpoch: v.source, targetEpoch: v.target, signingRoot: PROBE_ROOT})));
  const blocks: boolean[] = [];
  for (let slot = 0; slot < SLOTS; slot++) blocks.push(!(await sp.wouldSignBlock(PK, slot, PROBE_ROOT)));
  return {votes, blocks};
}

/** Every probe refused in `before` is refused in `after`. */
function expectNoLess(before: {votes: boolean[]; blocks: boolean[]}, after: {votes: boolean[]; blocks: boolean[]}): void {
  expect(GRID.filter((v, i) => before.votes[i] && !after.votes[i])).toEqual([]);
  expect(before.blocks.flatMap((refused, slot) => (refused && !after.blocks[slot] ? [slot] : []))).toEqual([]);
}

async function signNatively(sp: SlashingProtection, next: (n: number) => number, count: number, maxEpoch: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const source = next(maxEpoch);
    const target = source + next(4);
    await sp.checkAndInsertAttestation(PK, {sourceEpoch: source, targetEpoch: target, signingRoot: fromHex(root(i + 1))}).catch(() => undefined);
    await sp.checkAndInsertBlockProposal(PK, next(SLOTS), fromHex(root(i + 1))).catch(() => undefined);
  }
}

describe("EIP-3076 interchange", () => {
  let dirs: string[] = [];
  const fresh = async (): Promise<SlashingProtection> => {
    const dir = await mkdtemp(join(tmpdir(), "interchange-"));
    dirs.push(dir);
    const sp = await SlashingProtection.open(dir);
    await sp.bindToChain(GVR);
    return sp;
  };
  beforeEach(() => {
    dirs = [];
  });
  afterEach(async () => {
    for (const dir of dirs) await rm(dir, {recursive: true, force: true});
  });

  it("imports the EIP's example instance and then refuses what its conditions forbid", async () => {
    const sp = await fresh();
    const interchange = parseInterchange(EIP_EXAMPLE);
    await sp.importHistory(interchange.genesisValidatorsRoot, interchange.data);
    const block = (slot: number, r: string) => sp.wouldSignBlock(PK, slot, fromHex(r));
    const vote = (source: number, target: number, r: string) => sp.wouldSignAttestation(PK, {sourceEpoch: source, targetEpoch: target, signingRoot: fromHex(r)});
    expect(await block(81952, root(1))).toBe(false);
    expect(await block(81951, root(1))).toBe(false);
    expect(await block(81000, root(1))).toBe(false);
    expect(await block(81953, root(1))).toBe(true);
    expect(await vote(2290, 3008, root(1))).toBe(false); // no root: any vote at 3008 may be a double vote
    expect(await vote(2290, 3007, root(1))).toBe(false);
    expect(await vote(2289, 3009, root(1))).toBe(false); // source below the file's
    expect(await vote(2290, 3009, root(1))).toBe(true);
    await sp.close();
  });

  it("refuses an import for another chain and changes nothing", async () => {
    const sp = await fresh();
    await sp.checkAndInsertBlockProposal(PK, 5, fromHex(root(1)));
    const before = await sp.exportHistory();
    const other = parseInterchange({...EIP_EXAMPLE, metadata: {...EIP_EXAMPLE.metadata, genesis_validators_root: OTHER_GVR}});
    await expect(sp.importHistory(other.genesisValidatorsRoot, other.data)).rejects.toThrow(InterchangeError);
    expect(await sp.exportHistory()).toEqual(before);
    expect(await sp.genesisValidatorsRoot()).toBe(GVR);
    await sp.close();
  });

  it.each([
    ["a version other than 5", {...EIP_EXAMPLE, metadata: {...EIP_EXAMPLE.metadata, interchange_format_version: "4"}}, "interchange_format_version"],
    ["a missing metadata", {data: []}, "metadata"],
    ["a short genesis validators root", {...EIP_EXAMPLE, metadata: {...EIP_EXAMPLE.metadata, genesis_validators_root: "0x1234"}}, "genesis_validators_root"],
    ["a missing data", {metadata: EIP_EXAMPLE.metadata}, "data"],
    ["a 32-byte pubkey", {...EIP_EXAMPLE, data: [{...EIP_EXAMPLE.data[0], pubkey: GVR}]}, "data[0].pubkey"],
    ["a slot as a JSON number", {...EIP_EXAMPLE, data: [{...EIP_EXAMPLE.data[0], signed_blocks: [{slot: 5}]}]}, "data[0].signed_blocks[0].slot"],
    ["a negative epoch", {...EIP_EXAMPLE, data: [{...EIP_EXAMPLE.data[0], signed_attestations: [{source_epoch: "-1", target_epoch: "2"}]}]}, "source_epoch"],
    ["a missing target epoch", {...EIP_EXAMPLE, data: [{...EIP_EXAMPLE.data[0], signed_attestations: [{source_epoch: "1"}]}]}, "target_epoch"],
    ["a bad signing root", {...EIP_EXAMPLE, data: [{...EIP_EXAMPLE.data[0], signed_blocks: [{slot: "1", signing_root: "0xzz"}]}]}, "signing_root"],
    ["no signed_attestations", {...EIP_EXAMPLE, data: [{pubkey: PUBKEY, signed_blocks: []}]}, "signed_attestations"],
  ])("rejects %s, naming the field", (_what, doc, field) => {
    expect(() => parseInterchange(doc)).toThrow(InterchangeError);
    expect(() => parseInterchange(doc)).toThrow(field);
  });

  it("imports a history of 300,000 attestations of one validator", async () => {
    const sp = await fresh();
    const attestations = Array.from({length: 300_000}, (_, i) => ({source: i, target: i + 1, signingRoot: null}));
    await sp.importHistory(GVR, [{pubkey: PUBKEY, blocks: [{slot: 9_600_000, signingRoot: null}], attestations}]);
    const at = (source: number, target: number) => sp.wouldSignAttestation(PK, {sourceEpoch: source, targetEpoch: target, signingRoot: PROBE_ROOT});
    expect(await at(299_999, 300_000)).toBe(false);
    expect(await at(299_998, 300_001)).toBe(false);
    expect(await at(300_000, 300_001)).toBe(true);
    expect(await sp.wouldSignBlock(PK, 9_600_000, PROBE_ROOT)).toBe(false);
    await sp.close();
  });

  it("writes both forms as the EIP's schema and field formats require", async () => {
    const sp = await fresh();
    await signNatively(sp, rng(7), 12, 16);
    const histories = await sp.exportHistory();
    const validate = new Ajv({strict: false}).compile(schema);
    for (const form of ["complete", "minimal"] as const) {
      const json = interchangeJson(GVR, histories, form);
      expect(validate(json)).toBe(true);
      expect(json.metadata).toEqual({interchange_format_version: "5", genesis_validators_root: GVR});
      for (const entry of json.data) {
        expect(entry.pubkey).toMatch(/^0x[0-9a-f]{96}$/);
        for (const b of entry.signed_blocks) expect(b).toEqual({slot: expect.stringMatching(/^\d+$/), signing_root: expect.stringMatching(/^0x[0-9a-f]{64}$/)});
        for (const a of entry.signed_attestations) {
          expect(Object.keys(a).sort()).toEqual(expect.arrayContaining(["source_epoch", "target_epoch"]));
          expect(a.source_epoch).toMatch(/^\d+$/);
          expect(a.target_epoch).toMatch(/^\d+$/);
        }
      }
    }
    const complete = interchangeJson(GVR, histories, "complete").data[0];
    const minimal = interchangeJson(GVR, histories, "minimal").data[0];
    expect(minimal.signed_blocks).toHaveLength(1);
    expect(minimal.signed_attestations).toHaveLength(1);
    const epochs = (key: "source_epoch" | "target_epoch") => Math.max(...complete.signed_attestations.map((a) => Number(a[key])));
    expect(minimal.signed_attestations[0]).toMatchObject({source_epoch: String(epochs("source_epoch")), target_epoch: String(epochs("target_epoch"))});
    await sp.close();
  });

  it("an import refuses all its file forbids, and everything refused before (seeded random histories)", async () => {
    for (let seed = 1; seed <= 16; seed++) {
      const next = rng(seed);
      const sp = await fresh();
      await signNatively(sp, next, next(8), EPOCHS - 4);
      const before = await refusals(sp);
      const votes = Array.from({length: 1 + next(4)}, () => {
        const source = next(EPOCHS - 2);
        // now and then a record whose source is after its target: the format does not forbid it
        return {source, target: next(6) === 0 ? Math.max(0, source - 1) : source + next(6)};
      });
      const slots = Array.from({length: next(3)}, () => next(SLOTS));
      const history: ValidatorHistory = {
        pubkey: PUBKEY,
        blocks: slots.map((slot, i) => ({slot, signingRoot: i % 2 ? root(0x40 + i) : null})),
        attestations: votes.map((v, i) => ({...v, signingRoot: i % 2 ? root(0x50 + i) : null})),
      };
      await sp.importHistory(GVR, [history]);
      const after = await refusals(sp);
      expectNoLess(before, after);
      const forbidden = GRID.filter((v) => fileForbidsVote(votes, v));
      expect({seed, signable: forbidden.filter((v) => !after.votes[GRID.indexOf(v)])}).toEqual({seed, signable: []});
      const forbiddenSlots = Array.from({length: SLOTS}, (_, s) => s).filter((s) => fileForbidsBlock(slots, s));
      expect({seed, signable: forbiddenSlots.filter((s) => !after.blocks[s])}).toEqual({seed, signable: []});
      // and it is no wall: a vote and a block above everything are signed
      const top = EPOCHS + 10;
      await sp.checkAndInsertAttestation(PK, {sourceEpoch: top, targetEpoch: top + 1, signingRoot: PROBE_ROOT});
      await sp.checkAndInsertBlockProposal(PK, SLOTS + 10, PROBE_ROOT);
      await sp.close();
    }
  }, SLOW);

  it("export then import into another database keeps every refusal, in both forms", async () => {
    for (let seed = 100; seed < 106; seed++) {
      const next = rng(seed);
      const source = await fresh();
      await signNatively(source, next, 4, 10);
      await source.importHistory(GVR, [{pubkey: PUBKEY, blocks: [], attestations: [{source: next(10), target: 10 + next(4), signingRoot: null}]}]);
      await signNatively(source, next, 6, EPOCHS - 4);
      const before = await refusals(source);
      for (const form of ["complete", "minimal"] as const) {
        const file = parseInterchange(JSON.parse(JSON.stringify(interchangeJson(GVR, await source.exportHistory(), form))));
        const target = await fresh();
        await target.importHistory(file.genesisValidatorsRoot, file.data);
        expectNoLess(before, await refusals(target));
        await target.close();
      }
      await source.close();
    }
  }, SLOW);

  it("pruning folds old history into the watermark and refuses everything refused before", async () => {
    for (let seed = 200; seed < 206; seed++) {
      const next = rng(seed);
      const sp = await fresh();
      // a long, regular history, with some late and out-of-order votes
      for (let epoch = 1; epoch < EPOCHS - 2; epoch++) {
        const source = next(5) === 0 ? Math.max(0, epoch - 1 - next(3)) : epoch - 1;
        await sp.checkAndInsertAttestation(PK, {sourceEpoch: source, targetEpoch: epoch, signingRoot: fromHex(root(epoch))}).catch(() => undefined);
      }
      const before = await refusals(sp);
      const records = (await sp.exportHistory())[0].attestations.length;
      const removed = await sp.pruneAttestations(4);
      expect(removed).toBeGreaterThan(0);
      expect((await sp.exportHistory())[0].attestations).toHaveLength(records - removed);
      expectNoLess(before, await refusals(sp));
      await sp.checkAndInsertAttestation(PK, {sourceEpoch: EPOCHS - 3, targetEpoch: EPOCHS, signingRoot: PROBE_ROOT});
      await sp.close();
    }
  }, SLOW);
});

import {afterEach, beforeEach, describe, expect, it} from "@jest/globals";
import {mkdtemp, rm} from "node:fs/promises";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {interopSecretKey} from "@lodestar/state-transition";
import {SlashingProtection, SlashingProtectionError} from "../../../src/validator/slashingProtection.ts";

const pubkeyA = interopSecretKey(0).toPublicKey().toBytes();
const pubkeyB = interopSecretKey(1).toPublicKey().toBytes();
const root = (byte: number): Uint8Array => new Uint8Array(32).fill(byte);
const vote = (sourceEpoch: number, targetEpoch: number, byte = 1) => ({sourceEpoch, targetEpoch, signingRoot: root(byte)});

async function expectRefused(promise: Promise<void>, kind: string): Promise<void> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e
  );
  expect(err).toBeInstanceOf(SlashingProtectionError);
  expect((err as SlashingProtectionError).kind).toBe(kind);
}

describe("SlashingProtection", () => {
  let dir: string;
  let sp: SlashingProtection;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "slashing-"));
    sp = await SlashingProtection.open(dir);
  });

  afterEach(async () => {
    await sp.close();
    await rm(dir, {recursive: true, force: true});
  });

  it("refuses a second, different block at the same slot and any lower slot", async () => {
    await sp.checkAndInsertBlockProposal(pubkeyA, 10, root(1));
    await expectRefused(sp.checkAndInsertBlockProposal(pubkeyA, 10, root(2)), "double_proposal");
    await expectRefused(sp.checkAndInsertBlockProposal(pubkeyA, 9, root(3)), "old_proposal");
    await sp.checkAndInsertBlockProposal(pubkeyA, 11, root(4));
    // Another key has its own history.
    await sp.checkAndInsertBlockProposal(pubkeyB, 10, root(2));
  });

  it("allows signing the very same block or attestation twice", async () => {
    await sp.checkAndInsertBlockProposal(pubkeyA, 5, root(1));
    await sp.checkAndInsertBlockProposal(pubkeyA, 5, root(1));
    await sp.checkAndInsertAttestation(pubkeyA, vote(2, 3));
    await sp.checkAndInsertAttestation(pubkeyA, vote(2, 3));
  });

  it("refuses a double vote: same target, different data", async () => {
    await sp.checkAndInsertAttestation(pubkeyA, vote(2, 3, 1));
    await expectRefused(sp.checkAndInsertAttestation(pubkeyA, vote(2, 3, 2)), "double_vote");
    await expectRefused(sp.checkAndInsertAttestation(pubkeyA, vote(1, 3, 3)), "double_vote");
    await sp.checkAndInsertAttestation(pubkeyB, vote(2, 3, 2));
  });

  it("refuses a vote surrounding an earlier one", async () => {
    await sp.checkAndInsertAttestation(pubkeyA, vote(3, 4));
    await expectRefused(sp.checkAndInsertAttestation(pubkeyA, vote(2, 5)), "surrounding_vote");
    // Same source or same-or-earlier inner target is not a surround.
    await sp.checkAndInsertAttestation(pubkeyA, vote(3, 5));
    await sp.checkAndInsertAttestation(pubkeyA, vote(5, 6));
  });

  it("refuses a vote surrounded by an earlier one", async () => {
    await sp.checkAndInsertAttestation(pubkeyA, vote(1, 10));
    await expectRefused(sp.checkAndInsertAttestation(pubkeyA, vote(2, 9)), "surrounded_vote");
    await expectRefused(sp.checkAndInsertAttestation(pubkeyA, vote(5, 6)), "surrounded_vote");
    await sp.checkAndInsertAttestation(pubkeyA, vote(1, 9));
    await sp.checkAndInsertAttestation(pubkeyB, vote(2, 9));
  });

  it("refuses a vote whose source is after its target", async () => {
    await expectRefused(sp.checkAndInsertAttestation(pubkeyA, vote(4, 3)), "invalid_vote");
  });

  it("serializes concurrent checks of one key: only one of two conflicting votes passes", async () => {
    const results = await Promise.allSettled([
      sp.checkAndInsertAttestation(pubkeyA, vote(1, 2, 1)),
      sp.checkAndInsertAttestation(pubkeyA, vote(1, 2, 2)),
      sp.checkAndInsertBlockProposal(pubkeyA, 3, root(1)),
      sp.checkAndInsertBlockProposal(pubkeyA, 3, root(2)),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled", "rejected"]);
  });

  it("keeps its history across a reopen", async () => {
    await sp.checkAndInsertBlockProposal(pubkeyA, 20, root(1));
    await sp.checkAndInsertAttestation(pubkeyA, vote(4, 8));
    await sp.close();
    sp = await SlashingProtection.open(dir);
    await expectRefused(sp.checkAndInsertBlockProposal(pubkeyA, 20, root(2)), "double_proposal");
    await expectRefused(sp.checkAndInsertBlockProposal(pubkeyA, 19, root(2)), "old_proposal");
    await expectRefused(sp.checkAndInsertAttestation(pubkeyA, vote(4, 8, 2)), "double_vote");
    await expectRefused(sp.checkAndInsertAttestation(pubkeyA, vote(3, 9)), "surrounding_vote");
    await expectRefused(sp.checkAndInsertAttestation(pubkeyA, vote(5, 7)), "surrounded_vote");
    await sp.checkAndInsertBlockProposal(pubkeyA, 20, root(1));
    await sp.checkAndInsertAttestation(pubkeyA, vote(8, 9));
  });

  it("binds its records to one chain: the same genesis validators root again is fine, another is refused", async () => {
    const gvr = root(7);
    await sp.bindToChain(gvr);
    await sp.bindToChain(gvr);
    await expect(sp.bindToChain(root(8))).rejects.toThrow("another chain");
    await sp.close();
    sp = await SlashingProtection.open(dir);
    expect(await sp.genesisValidatorsRoot()).toBe("0x" + "07".repeat(32));
  });

  it("keeps an imported watermark across a reopen: nothing at or below it is signed", async () => {
    await sp.bindToChain(root(7));
    await sp.importHistory("0x" + "07".repeat(32), [{pubkey: "0x" + Buffer.from(pubkeyA).toString("hex"), blocks: [], attestations: [{source: 5, target: 9, signingRoot: null}]}]);
    await sp.close();
    sp = await SlashingProtection.open(dir);
    await expectRefused(sp.checkAndInsertAttestation(pubkeyA, vote(6, 8)), "old_vote");
    await expectRefused(sp.checkAndInsertAttestation(pubkeyA, vote(5, 9)), "double_vote");
    await expectRefused(sp.checkAndInsertAttestation(pubkeyA, vote(4, 10)), "old_vote");
    await sp.checkAndInsertAttestation(pubkeyA, vote(5, 10));
    await sp.checkAndInsertAttestation(pubkeyB, vote(6, 8));
  });
});

import {describe, expect, it} from "@jest/globals";
import {publishDuties, type ValidatorContext} from "../../../src/validator/context.ts";
import type {ValidatorDuty} from "../../../src/metrics/nodeMetrics.ts";

/** A duty counts as performed once what was signed for it is published; otherwise it is missed. */
describe("validator duty counts", () => {
  function recorder() {
    const counts: Record<string, number> = {};
    const add = (result: string) => (duty: ValidatorDuty, n = 1) => void (counts[`${duty} ${result}`] = (counts[`${duty} ${result}`] ?? 0) + n);
    const ctx = {duties: {performed: add("performed"), missed: add("missed")}} as unknown as ValidatorContext;
    return {ctx, counts};
  }

  it("counts the published ones performed and the unsigned ones missed", async () => {
    const {ctx, counts} = recorder();
    await publishDuties(ctx, "attestation", 5, 3, async () => undefined);
    expect(counts).toEqual({"attestation performed": 3, "attestation missed": 2});
  });

  it("counts every duty missed when publishing fails, and passes the failure on", async () => {
    const {ctx, counts} = recorder();
    await expect(publishDuties(ctx, "block_proposal", 1, 1, async () => Promise.reject(new Error("node down")))).rejects.toThrow("node down");
    expect(counts).toEqual({"block_proposal missed": 1});
  });

  it("does not publish when nothing was signed", async () => {
    const {ctx, counts} = recorder();
    let published = false;
    await publishDuties(ctx, "sync_committee_message", 4, 0, async () => void (published = true));
    expect(published).toBe(false);
    expect(counts).toEqual({"sync_committee_message missed": 4});
  });
});

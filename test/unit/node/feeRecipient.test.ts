import {describe, expect, it} from "@jest/globals";
import type {BeaconDb} from "../../../src/db/beaconDb.ts";
import {NodeSettings} from "../../../src/nodeSettings.ts";
import {parseNodeOptions} from "../../../src/cli/options.ts";

/** Where a proposal's fees go: the proposer's registration (prepare_beacon_proposer), else `--suggested-fee-recipient`. */
describe("fee recipient of a proposal", () => {
  const memoryDb = () => {
    let graffiti: Uint8Array | null = null;
    return {chainMeta: {graffiti: {get: async () => graffiti, put: async (v: Uint8Array) => void (graffiti = v)}}} as unknown as BeaconDb;
  };

  it("is the registered one, and --suggested-fee-recipient for proposers that registered none", async () => {
    const opts = parseNodeOptions(["--suggested-fee-recipient", "0x00000000000000000000000000000000000000fe"]);
    if (opts === "help") throw new Error("unexpected help");
    const settings = await NodeSettings.load(memoryDb(), undefined);
    settings.setDefaultFeeRecipient(Buffer.from(opts.suggestedFeeRecipient.slice(2), "hex"));
    settings.apiView("test").setProposerFeeRecipient(7, new Uint8Array(20).fill(0xaa));
    expect(Buffer.from(settings.feeRecipientOf(7)).toString("hex")).toBe("aa".repeat(20));
    expect(Buffer.from(settings.feeRecipientOf(8)).toString("hex")).toBe("00".repeat(19) + "fe");
  });
});

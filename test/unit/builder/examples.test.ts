import {describe, expect, it} from "@jest/globals";
import {execFileSync} from "node:child_process";
import {fileURLToPath} from "node:url";

const FIXTURE = fileURLToPath(new URL("./fixtures/builderExamples.ts", import.meta.url));
const EXAMPLES = "/work/shared/specs/builder-specs/examples";

interface Result {
  fork: string;
  name: string;
  version: string | null;
  error?: string;
  jsonRoundTrip: boolean;
  sszRoundTrip: boolean;
  jsonToSsz: boolean;
  sszToJson: boolean;
}

describe("builder-specs examples", () => {
  // the examples are of the mainnet preset, and a process reads its preset once: they are decoded in a child
  it("every example from bellatrix to fulu decodes and re-encodes exactly, JSON and SSZ", () => {
    const out = execFileSync(process.execPath, [FIXTURE, EXAMPLES], {env: {...process.env, LODESTAR_PRESET: "mainnet"}, encoding: "utf8"});
    const results = out.trim().split("\n").map((line) => JSON.parse(line) as Result);
    const names = results.map((r) => `${r.fork}/${r.name}`);
    expect(names).toEqual([
      "bellatrix/execution_payload",
      "bellatrix/signed_blinded_beacon_block",
      "bellatrix/signed_builder_bid",
      "bellatrix/signed_validator_registrations",
      "capella/execution_payload",
      "capella/signed_blinded_beacon_block",
      "capella/signed_builder_bid",
      "deneb/execution_payload_and_blobs_bundle",
      "deneb/signed_blinded_beacon_block",
      "deneb/signed_builder_bid",
      "electra/execution_payload_and_blobs_bundle",
      "electra/signed_blinded_beacon_block",
      "electra/signed_builder_bid",
      "fulu/execution_payload_and_blobs_bundle",
      "fulu/signed_blinded_beacon_block",
      "fulu/signed_builder_bid",
    ]);
    for (const r of results) {
      expect({example: `${r.fork}/${r.name}`, error: r.error, jsonRoundTrip: r.jsonRoundTrip, sszRoundTrip: r.sszRoundTrip, jsonToSsz: r.jsonToSsz, sszToJson: r.sszToJson}).toEqual({
        example: `${r.fork}/${r.name}`,
        error: undefined,
        jsonRoundTrip: true,
        sszRoundTrip: true,
        jsonToSsz: true,
        sszToJson: true,
      });
      // versioned responses name the fork of their example's folder
      if (r.version !== null) expect(r.version).toBe(r.fork);
    }
  });
});

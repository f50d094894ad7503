import {describe, expect, it} from "@jest/globals";
import {ssz, type BeaconBlock} from "@lodestar/types";
import {ProducedPayloads} from "../../../src/chain/producedPayloads.ts";

function blockWithPayload(fill: number): BeaconBlock {
  const block = ssz.fulu.BeaconBlock.defaultValue();
  block.body.executionPayload.blockHash = new Uint8Array(32).fill(fill);
  return block;
}

describe("ProducedPayloads", () => {
  it("keeps the payloads of produced blocks by block hash, the oldest dropped first", () => {
    const kept = new ProducedPayloads(2);
    const produced = {block: blockWithPayload(1), fork: "fulu"};
    expect(kept.remember(produced)).toBe(produced);
    kept.remember({block: blockWithPayload(2)});
    expect(kept.get(new Uint8Array(32).fill(1))).toBe((produced.block as ReturnType<typeof ssz.fulu.BeaconBlock.defaultValue>).body.executionPayload);
    kept.remember({block: blockWithPayload(3)});
    expect(kept.get(new Uint8Array(32).fill(1))).toBeNull();
    expect(kept.get(new Uint8Array(32).fill(2))).not.toBeNull();
    expect(kept.get(new Uint8Array(32).fill(3))).not.toBeNull();
  });

  it("ignores blocks without a payload (before bellatrix)", () => {
    const kept = new ProducedPayloads();
    kept.remember({block: ssz.phase0.BeaconBlock.defaultValue()});
    expect(kept.get(new Uint8Array(32))).toBeNull();
  });
});

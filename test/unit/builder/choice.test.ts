import {describe, expect, it} from "@jest/globals";
import {ssz} from "@lodestar/types";
import {ForkName} from "@lodestar/params";
import {chooseBuilderBid} from "../../../src/chain/builderChoice.ts";
import type {BuiltPayload} from "../../../src/execution/engine.ts";

function bidOf(value: bigint) {
  const bid = ssz.deneb.SignedBuilderBid.defaultValue();
  bid.message.value = value;
  return {bid, version: ForkName.deneb};
}
const local = (blockValue: bigint) => ({built: {blockValue} as BuiltPayload});

describe("builder or local payload (beacon-APIs builder_boost_factor, weighed as Lighthouse and Lodestar do)", () => {
  it("takes the bid when value x boost / 100 is above the local value", () => {
    expect(chooseBuilderBid(1, local(100n), bidOf(101n), 100n)).not.toBeNull();
    expect(chooseBuilderBid(1, local(100n), bidOf(100n), 100n)).toBeNull();
    // boost 90: 110 x 0.9 = 99 is not above 100; boost 200: 51 x 2 = 102 is
    expect(chooseBuilderBid(1, local(100n), bidOf(110n), 90n)).toBeNull();
    expect(chooseBuilderBid(1, local(100n), bidOf(51n), 200n)).not.toBeNull();
    expect(chooseBuilderBid(1, local(0n), bidOf(10n ** 18n), 0n)).toBeNull();
  });

  it("takes the local payload when there is no usable bid, and the bid when there is no local payload", () => {
    const counted: string[] = [];
    const count = (source: string, reason: string) => void counted.push(`${source}:${reason}`);
    expect(chooseBuilderBid(1, local(0n), {reason: "timeout", detail: "no answer within 1000 ms"}, 100n, count)).toBeNull();
    expect(chooseBuilderBid(1, local(0n), null, 100n, count)).toBeNull();
    expect(chooseBuilderBid(1, {error: new Error("engine down")}, bidOf(1n), 100n, count)).not.toBeNull();
    expect(counted).toEqual(["local:timeout", "builder:local_failed"]);
  });
});

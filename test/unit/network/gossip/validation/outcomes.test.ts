import {describe, expect, it} from "@jest/globals";
import {EventEmitter} from "node:events";
import {BlockError} from "../../../../../src/chain/interface.ts";
import {PoolError, type PoolEvents} from "../../../../../src/pools/index.ts";
import {PoolAdmissions, blockErrorOutcome, poolErrorOutcome} from "../../../../../src/network/gossip/validation/outcomes.ts";
import {SeenBySlot} from "../../../../../src/network/gossip/validation/seenCache.ts";

describe("refusals as gossip outcomes", () => {
  it("IGNOREs the pools' timing and unknown-block refusals, REJECTs rule violations, IGNOREs internal errors", () => {
    const root = "0x" + "ab".repeat(32);
    expect(poolErrorOutcome(new PoolError("attestation slot 9 is in the future (current slot 8)")).result).toBe("IGNORE");
    expect(poolErrorOutcome(new PoolError("sync committee message slot 3 is too old (current slot 9)")).result).toBe("IGNORE");
    expect(poolErrorOutcome(new PoolError(`unknown block root ${root}`))).toEqual({result: "IGNORE", reason: `unknown block root ${root}`, unknownBlockRoot: root});
    expect(poolErrorOutcome(new PoolError("no committees known for slot 4: boom")).result).toBe("IGNORE");
    for (const reason of ["invalid signature", "unknown validator 5000", "validator 3 not in committee 0 at slot 2", "aggregate has no participants"]) {
      expect(poolErrorOutcome(new PoolError(reason)).result).toBe("REJECT");
    }
    expect(poolErrorOutcome(new Error("level closed")).result).toBe("IGNORE");
  });

  it("maps the chain's block errors as the spec does", () => {
    const parent = "0x" + "01".repeat(32);
    expect(blockErrorOutcome(new BlockError("PARENT_UNKNOWN", "x"), parent)).toMatchObject({result: "IGNORE", parentUnknown: true, unknownBlockRoot: parent});
    for (const code of ["ALREADY_KNOWN", "FUTURE_SLOT", "WOULD_REVERT_FINALIZED", "INVALID_EXECUTION_PAYLOAD"] as const) {
      expect(blockErrorOutcome(new BlockError(code, "x"), parent).result).toBe("IGNORE");
    }
    for (const code of ["NOT_LATER_THAN_PARENT", "INCORRECT_PROPOSER", "INVALID_SIGNATURE", "INVALID_STATE_ROOT", "STATE_TRANSITION_FAILED"] as const) {
      expect(blockErrorOutcome(new BlockError(code, "x"), parent).result).toBe("REJECT");
    }
    expect(blockErrorOutcome(new Error("disk full"), parent).result).toBe("IGNORE");
  });

  it("tells a pool's quiet drop from a kept operation by what the pool emitted", async () => {
    const emitter = new EventEmitter<PoolEvents>();
    const admissions = new PoolAdmissions(emitter);
    const kept = {message: {epoch: 0, validatorIndex: 1}, signature: new Uint8Array(96)};
    const dropped = {message: {epoch: 0, validatorIndex: 1}, signature: new Uint8Array(96)};
    expect(await admissions.submit(kept, Promise.resolve().then(() => void emitter.emit("voluntary_exit", kept)))).toBe(true);
    expect(await admissions.submit(dropped, Promise.resolve())).toBe(false);
  });
});

describe("SeenBySlot", () => {
  it("answers first-seen per slot, prunes old slots, and keeps at most maxSlots", () => {
    const seen = new SeenBySlot(3);
    expect(seen.add(5, "a")).toBe(true);
    expect(seen.add(5, "a")).toBe(false);
    expect(seen.has(5, "a")).toBe(true);
    expect(seen.has(6, "a")).toBe(false);
    for (const slot of [6, 7, 8]) seen.add(slot, "a");
    expect(seen.slotCount).toBe(3);
    expect(seen.has(5, "a")).toBe(false); // the oldest went first
    seen.prune(8);
    expect(seen.slotCount).toBe(1);
    expect(seen.has(8, "a")).toBe(true);
  });
});

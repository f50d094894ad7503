import type {ForkName} from "@lodestar/params";
import type {SignedBuilderBid} from "@lodestar/types";
import type {BidContext, BidOutcome} from "../builder/service.ts";
import type {BuiltPayload} from "../execution/engine.ts";
import {getLogger} from "../log.ts";

const log = getLogger("chain");

/** What block production needs of the builder service (src/builder/service.ts). */
export interface BlockBuilder {
  /** `--builder-boost-factor` */
  readonly boostFactor: bigint;
  getBid(ctx: BidContext): Promise<BidOutcome>;
  /** counts each choice by its reason (the metric) */
  countChoice?(source: "builder" | "local", reason: string): void;
}

/** Wraps `getBid` so that a boost factor of 0 (local only, beacon-APIs `builder_boost_factor`) does not ask the relay. */
export function askBuilder(builder: BlockBuilder, ctx: BidContext, boostFactor: bigint | undefined): Promise<BidOutcome> | null {
  return (boostFactor ?? builder.boostFactor) === 0n ? null : builder.getBid(ctx);
}

/**
 * The builder's bid when it is to be used, else null (the local payload): a valid bid is used when
 * `value × boost / 100 > local value` (beacon-APIs `builder_boost_factor`, as Lighthouse and
 * Lodestar weigh it), or when there is no local payload. Each choice is logged once, with its reason.
 */
export function chooseBuilderBid(
  slot: number,
  local: {built: BuiltPayload} | {error: Error},
  bid: BidOutcome | null,
  boostFactor: bigint,
  count?: BlockBuilder["countChoice"]
): {bid: SignedBuilderBid; version: ForkName} | null {
  if (bid === null) return null;
  if ("reason" in bid) {
    log.info({slot, reason: bid.reason, detail: bid.detail}, "local payload: no usable builder bid");
    count?.("local", bid.reason);
    return null;
  }
  const builderValue = bid.bid.message.value;
  if ("error" in local) {
    log.warn({slot, err: local.error.message, builderValue: String(builderValue)}, "builder payload: the local payload failed");
    count?.("builder", "local_failed");
    return bid;
  }
  const localValue = local.built.blockValue;
  if ((builderValue * boostFactor) / 100n > localValue) {
    log.info({slot, builderValue: String(builderValue), localValue: String(localValue), boostFactor: String(boostFactor)}, "builder payload: worth more than the local one");
    count?.("builder", "higher_value");
    return bid;
  }
  log.info({slot, builderValue: String(builderValue), localValue: String(localValue), boostFactor: String(boostFactor)}, "local payload: worth at least the builder's bid");
  count?.("local", "higher_value");
  return null;
}

import {ForkSeq, type ForkName} from "@lodestar/params";

/**
 * The Engine API method versions each fork uses (engine-api paris.md … osaka.md) and the
 * spec's timeouts. Which calls may be repeated after a lost answer: the ones that only report
 * or ask (newPayload, forkchoiceUpdated without attributes, exchangeCapabilities, getBlobs),
 * not the block-production path, whose slot deadline a second wait would miss.
 */

export interface ForkMethods {
  newPayload: string;
  forkchoiceUpdated: string;
  getPayload: string;
  /** null before deneb: no blob pool to ask */
  getBlobs: string | null;
}

export function engineMethodsOf(fork: ForkName): ForkMethods {
  const seq = ForkSeq[fork];
  if (seq < ForkSeq.bellatrix) throw new Error(`fork ${fork} has no execution payloads`);
  if (seq < ForkSeq.capella) return {newPayload: "engine_newPayloadV1", forkchoiceUpdated: "engine_forkchoiceUpdatedV1", getPayload: "engine_getPayloadV1", getBlobs: null};
  if (seq < ForkSeq.deneb) return {newPayload: "engine_newPayloadV2", forkchoiceUpdated: "engine_forkchoiceUpdatedV2", getPayload: "engine_getPayloadV2", getBlobs: null};
  if (seq < ForkSeq.electra) return {newPayload: "engine_newPayloadV3", forkchoiceUpdated: "engine_forkchoiceUpdatedV3", getPayload: "engine_getPayloadV3", getBlobs: "engine_getBlobsV1"};
  if (seq < ForkSeq.fulu) return {newPayload: "engine_newPayloadV4", forkchoiceUpdated: "engine_forkchoiceUpdatedV3", getPayload: "engine_getPayloadV4", getBlobs: "engine_getBlobsV1"};
  return {newPayload: "engine_newPayloadV4", forkchoiceUpdated: "engine_forkchoiceUpdatedV3", getPayload: "engine_getPayloadV5", getBlobs: "engine_getBlobsV2"};
}

/** Every method this client may call, for engine_exchangeCapabilities. */
export const CONSENSUS_CAPABILITIES: readonly string[] = [
  "engine_newPayloadV1",
  "engine_newPayloadV2",
  "engine_newPayloadV3",
  "engine_newPayloadV4",
  "engine_forkchoiceUpdatedV1",
  "engine_forkchoiceUpdatedV2",
  "engine_forkchoiceUpdatedV3",
  "engine_getPayloadV1",
  "engine_getPayloadV2",
  "engine_getPayloadV3",
  "engine_getPayloadV4",
  "engine_getPayloadV5",
  "engine_getBlobsV1",
  "engine_getBlobsV2",
];

/** The spec's `timeout` of each method, in ms. */
export function engineTimeoutMs(method: string): number {
  if (method.startsWith("engine_newPayload") || method.startsWith("engine_forkchoiceUpdated")) return 8_000;
  // getPayload, getBlobs, exchangeCapabilities
  return 1_000;
}

import type {ForkName} from "@lodestar/params";
import {DECIMAL, hexOfLength, parseFork} from "./textValues.ts";
import {keptHex} from "./jsonText.ts";
import type {MetaField} from "./routes/types.ts";

/**
 * The response metadata fields of the route table: each one's JSON key beside `data`, its
 * header, and how both are read and written.
 */

function metaField<T>(
  json: string,
  header: string,
  toJson: (v: T) => unknown,
  fromJson: (j: unknown) => T | undefined,
  fromHeader: (h: string) => T | undefined = fromJson
): MetaField<T> {
  const checked =
    <I>(read: (input: I) => T | undefined) =>
    (input: I): T => {
      const value = read(input);
      if (value === undefined) throw new Error(`Invalid ${json} in response: ${String(input)}`);
      return value;
    };
  return {json, header, toJson, fromJson: checked(fromJson), toHeader: (v) => String(toJson(v)), fromHeader: checked(fromHeader)};
}

function boolField(json: string, header: string): MetaField<boolean> {
  const fromHeader = (h: string) => (h === "true" ? true : h === "false" ? false : undefined);
  return metaField<boolean>(json, header, (v) => v, (j) => (typeof j === "boolean" ? j : undefined), fromHeader);
}

const decimalBigint = (j: unknown): bigint | undefined => (typeof j === "string" && DECIMAL.test(j) ? BigInt(j) : undefined);
const rootHex = (j: unknown): Uint8Array | undefined => (typeof j === "string" ? hexOfLength(j, 32) : undefined);

export const versionMeta = metaField<ForkName>("version", "Eth-Consensus-Version", (v) => v, (j) => (typeof j === "string" ? parseFork(j) : undefined));
// added to the spec after phase0 (optimistic sync) and after bellatrix (`finalized`): a node built
// before then leaves them out, and meant false (no optimistic imports; not known to be finalized)
export const executionOptimisticMeta: MetaField<boolean> = {...boolField("execution_optimistic", "Eth-Execution-Optimistic"), whenAbsent: {value: false}};
export const finalizedMeta: MetaField<boolean> = {...boolField("finalized", "Eth-Finalized"), whenAbsent: {value: false}};
export const dependentRootMeta = metaField<Uint8Array>("dependent_root", "Eth-Dependent-Root", keptHex, rootHex);
export const executionPayloadBlindedMeta = boolField("execution_payload_blinded", "Eth-Execution-Payload-Blinded");
export const executionPayloadValueMeta = metaField<bigint>("execution_payload_value", "Eth-Execution-Payload-Value", String, decimalBigint);
export const consensusBlockValueMeta = metaField<bigint>("consensus_block_value", "Eth-Consensus-Block-Value", String, decimalBigint);
/**
 * v2 block production's values, for validator clients of early 2023 (Lodestar 1.5), which read a
 * top-level `block_value` (the execution payload value, wei) that the standard never had; with the
 * headers v3 defines. An answer without them (nodes of other families) reads as 0.
 */
export const blockValueMeta: MetaField<bigint> = {...metaField<bigint>("block_value", "Eth-Execution-Payload-Value", String, decimalBigint), whenAbsent: {value: 0n}};
export const v2ConsensusBlockValueMeta: MetaField<bigint> = {...consensusBlockValueMeta, whenAbsent: {value: 0n}};

/** Metadata of responses about a state or block: `execution_optimistic`, `finalized`. */
export interface ChainMeta {
  executionOptimistic: boolean;
  finalized: boolean;
}
export const chainMeta = {executionOptimistic: executionOptimisticMeta, finalized: finalizedMeta};

export interface VersionMeta {
  version: ForkName;
}
export const versionOnlyMeta = {version: versionMeta};

export type VersionedChainMeta = VersionMeta & ChainMeta;
export const versionedChainMeta = {version: versionMeta, ...chainMeta};

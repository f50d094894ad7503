import {CONSOLIDATION_REQUEST_TYPE, DEPOSIT_REQUEST_TYPE, ForkSeq, VERSIONED_HASH_VERSION_KZG, WITHDRAWAL_REQUEST_TYPE, type ForkName} from "@lodestar/params";
import {createHash} from "node:crypto";
import {ssz, type ExecutionPayload, type ExecutionRequests, type capella} from "@lodestar/types";
import type {BlobsBundle, PayloadAttributes} from "./engine.ts";

/**
 * The Engine API's JSON encoding (engine-api common.md "Encoding"): DATA is 0x hex of the bytes,
 * QUANTITY is 0x hex of the number without leading zeros. Decoders throw EngineJsonError on
 * anything else, so a malformed message is refused whole.
 */

export class EngineJsonError extends Error {}

export type Json = Record<string, unknown>;

export const data = (bytes: Uint8Array): string => "0x" + Buffer.from(bytes).toString("hex");
export const quantity = (value: number | bigint): string => "0x" + value.toString(16);

export function parseData(value: unknown, field: string, length?: number): Uint8Array {
  if (typeof value !== "string" || !/^0x(?:[0-9a-fA-F]{2})*$/.test(value)) throw new EngineJsonError(`${field}: not DATA (0x-prefixed hex bytes)`);
  const bytes = new Uint8Array(Buffer.from(value.slice(2), "hex"));
  if (length !== undefined && bytes.length !== length) throw new EngineJsonError(`${field}: ${bytes.length} bytes, expected ${length}`);
  return bytes;
}

export function parseQuantity(value: unknown, field: string): bigint {
  if (typeof value !== "string" || !/^0x(?:0|[1-9a-fA-F][0-9a-fA-F]*)$/.test(value)) throw new EngineJsonError(`${field}: not a QUANTITY`);
  return BigInt(value);
}

function parseNumber(value: unknown, field: string): number {
  const n = parseQuantity(value, field);
  if (n > BigInt(Number.MAX_SAFE_INTEGER)) throw new EngineJsonError(`${field}: too large`);
  return Number(n);
}

function parseList(value: unknown, field: string): unknown[] {
  if (!Array.isArray(value)) throw new EngineJsonError(`${field}: not an array`);
  return value;
}

export function parseObject(value: unknown, field: string): Json {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new EngineJsonError(`${field}: not an object`);
  return value as Json;
}

/** The Engine API's ExecutionPayloadV1/V2/V3 of a consensus payload (V2 adds withdrawals, V3 the blob gas fields). */
export function serializePayload(payload: ExecutionPayload): Json {
  const json: Json = {
    parentHash: data(payload.parentHash),
    feeRecipient: data(payload.feeRecipient),
    stateRoot: data(payload.stateRoot),
    receiptsRoot: data(payload.receiptsRoot),
    logsBloom: data(payload.logsBloom),
    prevRandao: data(payload.prevRandao),
    blockNumber: quantity(payload.blockNumber),
    gasLimit: quantity(payload.gasLimit),
    gasUsed: quantity(payload.gasUsed),
    timestamp: quantity(payload.timestamp),
    extraData: data(payload.extraData),
    baseFeePerGas: quantity(payload.baseFeePerGas),
    blockHash: data(payload.blockHash),
    transactions: payload.transactions.map(data),
  };
  const p = payload as Partial<{withdrawals: capella.Withdrawal[]; blobGasUsed: bigint; excessBlobGas: bigint}>;
  if (p.withdrawals !== undefined) json.withdrawals = p.withdrawals.map(serializeWithdrawal);
  if (p.blobGasUsed !== undefined) json.blobGasUsed = quantity(p.blobGasUsed);
  if (p.excessBlobGas !== undefined) json.excessBlobGas = quantity(p.excessBlobGas);
  return json;
}

function serializeWithdrawal(w: capella.Withdrawal): Json {
  return {index: quantity(w.index), validatorIndex: quantity(w.validatorIndex), address: data(w.address), amount: quantity(w.amount)};
}

function parseWithdrawal(value: unknown, field: string): capella.Withdrawal {
  const w = parseObject(value, field);
  return {
    index: parseNumber(w.index, `${field}.index`),
    validatorIndex: parseNumber(w.validatorIndex, `${field}.validatorIndex`),
    address: parseData(w.address, `${field}.address`, 20),
    amount: parseQuantity(w.amount, `${field}.amount`),
  };
}

/** A consensus payload of `fork` from its Engine API JSON. */
export function parsePayload(fork: ForkName, value: unknown, field = "executionPayload"): ExecutionPayload {
  const j = parseObject(value, field);
  const payload: Record<string, unknown> = {
    parentHash: parseData(j.parentHash, `${field}.parentHash`, 32),
    feeRecipient: parseData(j.feeRecipient, `${field}.feeRecipient`, 20),
    stateRoot: parseData(j.stateRoot, `${field}.stateRoot`, 32),
    receiptsRoot: parseData(j.receiptsRoot, `${field}.receiptsRoot`, 32),
    logsBloom: parseData(j.logsBloom, `${field}.logsBloom`, 256),
    prevRandao: parseData(j.prevRandao, `${field}.prevRandao`, 32),
    blockNumber: parseNumber(j.blockNumber, `${field}.blockNumber`),
    gasLimit: parseNumber(j.gasLimit, `${field}.gasLimit`),
    gasUsed: parseNumber(j.gasUsed, `${field}.gasUsed`),
    timestamp: parseNumber(j.timestamp, `${field}.timestamp`),
    extraData: parseData(j.extraData, `${field}.extraData`),
    baseFeePerGas: parseQuantity(j.baseFeePerGas, `${field}.baseFeePerGas`),
    blockHash: parseData(j.blockHash, `${field}.blockHash`, 32),
    transactions: parseList(j.transactions, `${field}.transactions`).map((tx, i) => parseData(tx, `${field}.transactions[${i}]`)),
  };
  if (ForkSeq[fork] >= ForkSeq.capella) {
    payload.withdrawals = parseList(j.withdrawals, `${field}.withdrawals`).map((w, i) => parseWithdrawal(w, `${field}.withdrawals[${i}]`));
  }
  if (ForkSeq[fork] >= ForkSeq.deneb) {
    payload.blobGasUsed = parseQuantity(j.blobGasUsed, `${field}.blobGasUsed`);
    payload.excessBlobGas = parseQuantity(j.excessBlobGas, `${field}.excessBlobGas`);
  }
  return payload as unknown as ExecutionPayload;
}

/** PayloadAttributesV1/V2/V3 (V2 adds withdrawals from capella, V3 the parent beacon block root from deneb). */
export function serializePayloadAttributes(fork: ForkName, attrs: PayloadAttributes): Json {
  const json: Json = {timestamp: quantity(attrs.timestamp), prevRandao: data(attrs.prevRandao), suggestedFeeRecipient: data(attrs.suggestedFeeRecipient)};
  if (ForkSeq[fork] >= ForkSeq.capella) json.withdrawals = (attrs.withdrawals ?? []).map(serializeWithdrawal);
  if (ForkSeq[fork] >= ForkSeq.deneb) json.parentBeaconBlockRoot = data(attrs.parentBeaconBlockRoot ?? new Uint8Array(32));
  return json;
}

export function parsePayloadAttributes(value: unknown): PayloadAttributes {
  const j = parseObject(value, "payloadAttributes");
  const attrs: PayloadAttributes = {
    timestamp: parseNumber(j.timestamp, "payloadAttributes.timestamp"),
    prevRandao: parseData(j.prevRandao, "payloadAttributes.prevRandao", 32),
    suggestedFeeRecipient: parseData(j.suggestedFeeRecipient, "payloadAttributes.suggestedFeeRecipient", 20),
  };
  if (j.withdrawals !== undefined && j.withdrawals !== null) {
    attrs.withdrawals = parseList(j.withdrawals, "payloadAttributes.withdrawals").map((w, i) => parseWithdrawal(w, `payloadAttributes.withdrawals[${i}]`));
  }
  if (j.parentBeaconBlockRoot !== undefined && j.parentBeaconBlockRoot !== null) {
    attrs.parentBeaconBlockRoot = parseData(j.parentBeaconBlockRoot, "payloadAttributes.parentBeaconBlockRoot", 32);
  }
  return attrs;
}

const REQUEST_TYPES = [
  {type: DEPOSIT_REQUEST_TYPE, key: "deposits", ssz: ssz.electra.DepositRequests},
  {type: WITHDRAWAL_REQUEST_TYPE, key: "withdrawals", ssz: ssz.electra.WithdrawalRequests},
  {type: CONSOLIDATION_REQUEST_TYPE, key: "consolidations", ssz: ssz.electra.ConsolidationRequests},
] as const;

/** EIP-7685 `requests`: `request_type ++ ssz(list)`, ascending by type, empty lists left out (engine-api prague.md). */
export function serializeExecutionRequests(requests: ExecutionRequests): string[] {
  const out: string[] = [];
  for (const {type, key, ssz: listType} of REQUEST_TYPES) {
    const list = requests[key] as never[];
    if (list.length === 0) continue;
    out.push(data(Buffer.concat([Uint8Array.of(type), (listType as {serialize(v: never[]): Uint8Array}).serialize(list)])));
  }
  return out;
}

export function parseExecutionRequests(value: unknown): ExecutionRequests {
  const requests: ExecutionRequests = {deposits: [], withdrawals: [], consolidations: []};
  let lastType = -1;
  for (const [i, item] of parseList(value, "executionRequests").entries()) {
    const bytes = parseData(item, `executionRequests[${i}]`);
    if (bytes.length <= 1) throw new EngineJsonError(`executionRequests[${i}]: no request data`);
    const type = bytes[0];
    if (type <= lastType) throw new EngineJsonError(`executionRequests[${i}]: type ${type} is out of order or repeated`);
    lastType = type;
    const entry = REQUEST_TYPES.find((t) => t.type === type);
    if (!entry) throw new EngineJsonError(`executionRequests[${i}]: unknown request type ${type}`);
    try {
      (requests as Record<string, unknown>)[entry.key] = entry.ssz.deserialize(bytes.subarray(1));
    } catch (e) {
      throw new EngineJsonError(`executionRequests[${i}]: ${(e as Error).message}`);
    }
  }
  return requests;
}

export function parseBlobsBundle(value: unknown): BlobsBundle {
  const j = parseObject(value, "blobsBundle");
  const list = (name: "commitments" | "proofs" | "blobs", length?: number) =>
    parseList(j[name], `blobsBundle.${name}`).map((v, i) => parseData(v, `blobsBundle.${name}[${i}]`, length));
  const bundle = {commitments: list("commitments", 48), proofs: list("proofs", 48), blobs: list("blobs")};
  if (bundle.commitments.length !== bundle.blobs.length) throw new EngineJsonError("blobsBundle: commitments and blobs differ in number");
  return bundle;
}

export function serializeBlobsBundle(bundle: BlobsBundle): Json {
  return {commitments: bundle.commitments.map(data), proofs: bundle.proofs.map(data), blobs: bundle.blobs.map(data)};
}

/** kzg_commitment_to_versioned_hash (deneb beacon-chain.md): what newPayloadV3+ and getBlobs name blobs by. */
export function kzgCommitmentToVersionedHash(commitment: Uint8Array): Uint8Array {
  const hash = createHash("sha256").update(commitment).digest();
  hash[0] = VERSIONED_HASH_VERSION_KZG;
  return new Uint8Array(hash);
}

import type {ChainForkConfig} from "@lodestar/config";
import {ForkSeq, isForkPostCapella, isForkPostDeneb, type ForkName} from "@lodestar/params";
import {ssz, type ExecutionPayload} from "@lodestar/types";
import {createHash} from "node:crypto";
import {blobToCommitment, computeBlobProof, computeCellsAndProofs} from "../kzg/kzg.ts";
import {type BlobAndProofs, type BlobsBundle, type BuiltPayload, EMPTY_BLOBS_BUNDLE, type ExecutionEngine, type ParentPayload, type PayloadAttributes, type PayloadStatus} from "./engine.ts";
import {data, kzgCommitmentToVersionedHash} from "./engineJson.ts";

/** Hash of the dev chain's execution genesis block (there is no real one). */
export const GENESIS_EXECUTION_BLOCK_HASH = new Uint8Array(createHash("sha256").update("beacon-gateway dev execution genesis").digest());
const GAS_LIMIT = 30_000_000;
const BASE_FEE_PER_GAS = 7n;
const EMPTY_TRIE_ROOT = Uint8Array.from(Buffer.from("56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421", "hex"));
const BYTES_PER_BLOB = 131072;
const GAS_PER_BLOB = 131072n;
/** blobs kept in the mock's pool, 128 KiB each */
const MAX_POOLED_BLOBS = 256;

/**
 * A blob of pseudo-random field elements, derived from a seed: each 32-byte element starts with
 * a zero byte, so it is below the BLS modulus.
 */
export function mockBlob(seed: string): Uint8Array {
  const blob = new Uint8Array(BYTES_PER_BLOB);
  for (let offset = 0, counter = 0; offset < BYTES_PER_BLOB; offset += 32, counter++) {
    const digest = createHash("sha256").update(seed).update(String(counter)).digest();
    blob.set(digest.subarray(1), offset + 1);
  }
  return blob;
}

/** The bundle of `count` mock blobs: proofs per blob before fulu, cell proofs from fulu on. */
function mockBlobsBundle(fork: ForkName, seed: string, count: number): BlobsBundle {
  const blobs = Array.from({length: count}, (_, i) => mockBlob(`${seed}/${i}`));
  const commitments = blobs.map((blob) => blobToCommitment(blob));
  const proofs = ForkSeq[fork] >= ForkSeq.fulu
    ? blobs.flatMap((blob) => computeCellsAndProofs(blob).proofs)
    : blobs.map((blob, i) => computeBlobProof(blob, commitments[i]));
  return {commitments, proofs, blobs};
}

export interface MockEngineOptions {
  /** blobs in each payload from deneb on (none by default: the dev chain stays cheap) */
  blobsPerBlock?: number;
}

/** The execution payload header that a post-merge dev genesis state carries. */
export function genesisExecutionHeader(config: ChainForkConfig, genesisTime: number) {
  const types = config.getPostBellatrixForkTypes(0);
  const header = types.ExecutionPayloadHeader.defaultValue();
  Object.assign(header, {
    blockHash: GENESIS_EXECUTION_BLOCK_HASH,
    receiptsRoot: EMPTY_TRIE_ROOT,
    stateRoot: EMPTY_TRIE_ROOT,
    gasLimit: GAS_LIMIT,
    baseFeePerGas: BASE_FEE_PER_GAS,
    timestamp: genesisTime,
  });
  return types.ExecutionPayloadHeader.toViewDU(header as never);
}

/**
 * The block hash the mock engine gives a payload: a digest of everything else in it.
 * A payload whose blockHash is not this digest was not built by this mock engine.
 */
export function mockBlockHash(fork: ForkName, payload: ExecutionPayload): Uint8Array {
  const type = ssz[fork as "bellatrix"].ExecutionPayload;
  const copy = {...payload, blockHash: new Uint8Array(32)} as never;
  return new Uint8Array(createHash("sha256").update(type.hashTreeRoot(copy)).digest());
}

/**
 * An execution engine for the dev chain: payloads without transactions (with mock blobs if asked) that
 * chain on each other by hash and block number. It keeps no state, so it survives restarts
 * of the node unchanged; whether a payload extends the right parent is checked by the
 * state transition (parent hash against the state's latest header).
 */
export class MockExecutionEngine implements ExecutionEngine {
  private readonly blobsPerBlock: number;
  /**
   * The blobs of the payloads it built, by versioned hash, with their proof (deneb, electra) or
   * cell proofs (fulu): its blob pool, as a real engine's holds the blobs of the transactions it saw
   */
  private readonly pool = new Map<string, BlobAndProofs>();

  constructor(opts: MockEngineOptions = {}) {
    this.blobsPerBlock = opts.blobsPerBlock ?? 0;
  }

  async notifyNewPayload(fork: string, payload: ExecutionPayload): Promise<PayloadStatus> {
    const expected = mockBlockHash(fork as ForkName, payload);
    if (payload.transactions.length === 0 && Buffer.from(expected).equals(payload.blockHash)) return {status: "VALID", latestValidHash: payload.blockHash};
    // not a payload of this mock: another client's mock engine built it (a devnet shared with other
    // clients), or it was altered. With no execution data to judge it by, the answer is an
    // engine's that lacks the data: SYNCING, and the block is imported optimistically.
    return {status: "SYNCING", latestValidHash: null};
  }

  async notifyForkchoiceUpdate(): Promise<void> {}

  async buildPayload(fork: string, parent: ParentPayload, attrs: PayloadAttributes): Promise<BuiltPayload> {
    const forkName = fork as ForkName;
    const isPreMerge = parent.blockHash.every((b) => b === 0);
    const parentHash = isPreMerge ? GENESIS_EXECUTION_BLOCK_HASH : parent.blockHash;
    const payload = ssz[forkName as "bellatrix"].ExecutionPayload.defaultValue() as ExecutionPayload;
    Object.assign(payload, {
      parentHash,
      feeRecipient: attrs.suggestedFeeRecipient,
      stateRoot: EMPTY_TRIE_ROOT,
      receiptsRoot: EMPTY_TRIE_ROOT,
      prevRandao: attrs.prevRandao,
      blockNumber: isPreMerge ? 1 : parent.blockNumber + 1,
      gasLimit: parent.gasLimit || GAS_LIMIT,
      gasUsed: 0,
      timestamp: attrs.timestamp,
      baseFeePerGas: BASE_FEE_PER_GAS,
      transactions: [],
    });
    if (isForkPostCapella(forkName)) (payload as {withdrawals: unknown}).withdrawals = attrs.withdrawals ?? [];
    const blobCount = isForkPostDeneb(forkName) ? this.blobsPerBlock : 0;
    if (isForkPostDeneb(forkName)) Object.assign(payload, {blobGasUsed: BigInt(blobCount) * GAS_PER_BLOB, excessBlobGas: 0n});
    payload.blockHash = mockBlockHash(forkName, payload);
    const blobsBundle = blobCount > 0 ? mockBlobsBundle(forkName, Buffer.from(payload.blockHash).toString("hex"), blobCount) : EMPTY_BLOBS_BUNDLE;
    this.addToPool(blobsBundle);
    return {payload, blobsBundle, executionRequests: {deposits: [], withdrawals: [], consolidations: []}, blockValue: 0n};
  }

  /**
   * engine_getBlobsV1 (before fulu): each blob with its proof, null where the pool has none;
   * engine_getBlobsV2 (fulu): every blob with its cell proofs, or null if any is missing.
   */
  async getBlobs(fork: string, versionedHashes: Uint8Array[]): Promise<Array<BlobAndProofs | null> | null> {
    const found = versionedHashes.map((hash) => this.pool.get(data(hash)));
    if (ForkSeq[fork as ForkName] < ForkSeq.fulu) return found.map((b) => (b && b.proofs.length === 1 ? b : null));
    if (found.some((b) => !b || b.proofs.length === 1)) return null;
    return found as BlobAndProofs[];
  }

  private addToPool({blobs, proofs, commitments}: BlobsBundle): void {
    const proofsPerBlob = blobs.length === 0 ? 0 : proofs.length / blobs.length;
    blobs.forEach((blob, i) => {
      this.pool.set(data(kzgCommitmentToVersionedHash(commitments[i])), {blob, proofs: proofs.slice(i * proofsPerBlob, (i + 1) * proofsPerBlob)});
    });
    // a blob pool, not an archive: the oldest blobs go
    for (const key of this.pool.keys()) if (this.pool.size > MAX_POOLED_BLOBS) this.pool.delete(key);
  }
}

export function isExecutionFork(fork: ForkName): boolean {
  return ForkSeq[fork] >= ForkSeq.bellatrix;
}

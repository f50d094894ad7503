import type {ChainForkConfig} from "@lodestar/config";
import type {Root, SignedBeaconBlock, Slot} from "@lodestar/types";
import {Bucket} from "./buckets.ts";
import {readUint64LE} from "./keys.ts";
import {type DbOp, type LevelDb, Repository} from "./repository.ts";
import {DbDamagedError} from "./damage.ts";
import {toRootHex} from "@lodestar/utils";

/** SignedBeaconBlock SSZ: 4-byte offset of `message`, 96-byte signature, then the message; its first field is the slot. */
const SIGNED_BLOCK_SLOT_OFFSET = 4 + 96;

/** The slot of a serialized SignedBeaconBlock, read without deserializing it. */
export function slotOfSignedBlockBytes(bytes: Uint8Array): Slot {
  return readUint64LE(bytes, SIGNED_BLOCK_SLOT_OFFSET);
}

/** Blocks by block root (hash tree root of the BeaconBlock), stored as SignedBeaconBlock SSZ. */
export class BlockRepository extends Repository {
  private readonly config: ChainForkConfig;

  constructor(db: LevelDb, config: ChainForkConfig) {
    super(db, Bucket.block);
    this.config = config;
  }

  async get(blockRoot: Root): Promise<SignedBeaconBlock | null> {
    const bytes = await this.getBytes(blockRoot);
    return bytes ? this.deserialize(bytes) : null;
  }

  /** The block stored under `blockRoot`, checked whole: its hash_tree_root must be that root, else DbDamagedError names the key. */
  async getVerified(blockRoot: Root): Promise<SignedBeaconBlock | null> {
    const bytes = await this.getBytes(blockRoot);
    if (bytes === null) return null;
    let block: SignedBeaconBlock;
    try {
      block = this.deserialize(bytes);
    } catch (e) {
      throw new DbDamagedError(this.db.location, [`the block stored under ${toRootHex(blockRoot)} does not decode (${(e as Error).message}): its bytes are damaged`]);
    }
    const root = this.config.getForkTypes(block.message.slot).BeaconBlock.hashTreeRoot(block.message as never);
    if (!Buffer.from(root).equals(Buffer.from(blockRoot))) {
      throw new DbDamagedError(this.db.location, [`the block stored under ${toRootHex(blockRoot)} hashes to ${toRootHex(root)}: its bytes are damaged`]);
    }
    return block;
  }

  getBytes(blockRoot: Root): Promise<Uint8Array | null> {
    return this.getRaw(blockRoot);
  }

  has(blockRoot: Root): Promise<boolean> {
    return this.hasRaw(blockRoot);
  }

  put(blockRoot: Root, block: SignedBeaconBlock): Promise<void> {
    return this.write([this.putOp(blockRoot, block)]);
  }

  putOp(blockRoot: Root, block: SignedBeaconBlock): DbOp {
    return this.putBytesOp(blockRoot, this.serialize(block));
  }

  /** For callers that already hold the SSZ bytes (e.g. a block received as SSZ). */
  putBytesOp(blockRoot: Root, bytes: Uint8Array): DbOp {
    return this.putRawOp(blockRoot, bytes);
  }

  deleteOp(blockRoot: Root): DbOp {
    return this.deleteRawOp(blockRoot);
  }

  /** Deletes these blocks in one batch (abandoned forks after finalization). */
  deleteMany(blockRoots: readonly Root[]): Promise<void> {
    return this.write(blockRoots.map((root) => this.deleteOp(root)));
  }

  serialize(block: SignedBeaconBlock): Uint8Array {
    return this.config.getForkTypes(block.message.slot).SignedBeaconBlock.serialize(block as never);
  }

  /** SSZ bytes to a block of the fork active at the slot written in the bytes. */
  deserialize(bytes: Uint8Array): SignedBeaconBlock {
    return this.config.getForkTypes(slotOfSignedBlockBytes(bytes)).SignedBeaconBlock.deserialize(bytes);
  }
}

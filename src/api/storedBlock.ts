import type {ChainForkConfig} from "@lodestar/config";
import type {SignedBeaconBlock} from "@lodestar/types";
import {slotOfSignedBlockBytes} from "../db/blocks.ts";
import type {SszLike} from "./codecs.ts";
import type {DataCodec} from "./routes/types.ts";

/**
 * A block as stored, its SSZ bytes: an SSZ answer sends them as they are, with no decode and
 * re-encode, and only a JSON answer decodes them (once, on first use).
 */
export class StoredBlock {
  readonly bytes: Uint8Array;
  readonly slot: number;
  private readonly config: ChainForkConfig;
  private decoded?: SignedBeaconBlock;

  constructor(bytes: Uint8Array, config: ChainForkConfig) {
    this.bytes = bytes;
    this.slot = slotOfSignedBlockBytes(bytes);
    this.config = config;
  }

  get block(): SignedBeaconBlock {
    return (this.decoded ??= this.config.getForkTypes(this.slot).SignedBeaconBlock.deserialize(this.bytes));
  }
}

/** Response data the handler gives as a StoredBlock; the client reads a block of the type `select(meta)`. */
export function storedBlockData<M>(select: (meta: M) => SszLike<SignedBeaconBlock>): DataCodec<SignedBeaconBlock, M, StoredBlock> {
  return {
    toJson: (stored, meta) => select(meta).toJson(stored.block),
    fromJson: (json, meta) => select(meta).fromJson(json),
    ssz: {serialize: (stored) => stored.bytes, deserialize: (bytes, meta) => select(meta).deserialize(bytes)},
  };
}

import type {Root} from "@lodestar/types";
import {ssz, type deneb, type fulu} from "@lodestar/types";
import {Bucket} from "./buckets.ts";
import {type DbOp, type LevelDb, Repository} from "./repository.ts";

/** The blob sidecars of each block that has blobs (deneb, electra), all of a block's under its root. */
export class BlobSidecarRepository extends Repository {
  constructor(db: LevelDb) {
    super(db, Bucket.blobSidecars);
  }

  async get(blockRoot: Root): Promise<deneb.BlobSidecar[] | null> {
    const bytes = await this.getRaw(blockRoot);
    return bytes ? ssz.deneb.BlobSidecars.deserialize(bytes) : null;
  }

  putOp(blockRoot: Root, sidecars: deneb.BlobSidecar[]): DbOp {
    return this.putRawOp(blockRoot, ssz.deneb.BlobSidecars.serialize(sidecars));
  }

  deleteOp(blockRoot: Root): DbOp {
    return this.deleteRawOp(blockRoot);
  }
}

/** The data column sidecars this node custodies (fulu), one entry per block root and column. */
export class DataColumnSidecarRepository extends Repository {
  constructor(db: LevelDb) {
    super(db, Bucket.dataColumnSidecar);
  }

  async get(blockRoot: Root, column: number): Promise<fulu.DataColumnSidecar | null> {
    const bytes = await this.getBytes(blockRoot, column);
    return bytes ? ssz.fulu.DataColumnSidecar.deserialize(bytes) : null;
  }

  getBytes(blockRoot: Root, column: number): Promise<Uint8Array | null> {
    return this.getRaw(columnKey(blockRoot, column));
  }

  /** The column indices stored for a block, ascending. */
  async columnsOf(blockRoot: Root): Promise<number[]> {
    const keys = await this.keys({gte: columnKey(blockRoot, 0), lte: columnKey(blockRoot, 0xffff)});
    return keys.map((k) => (k[32] << 8) | k[33]);
  }

  putOp(sidecar: fulu.DataColumnSidecar, blockRoot: Root): DbOp {
    return this.putRawOp(columnKey(blockRoot, sidecar.index), ssz.fulu.DataColumnSidecar.serialize(sidecar));
  }

  async deleteOps(blockRoot: Root): Promise<DbOp[]> {
    return (await this.columnsOf(blockRoot)).map((c) => this.deleteRawOp(columnKey(blockRoot, c)));
  }
}

function columnKey(blockRoot: Root, column: number): Uint8Array {
  const key = new Uint8Array(34);
  key.set(blockRoot);
  key[32] = column >> 8;
  key[33] = column & 0xff;
  return key;
}

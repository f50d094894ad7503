import {ForkName, ForkSeq, isForkPostAltair, type ForkPostAltair} from "@lodestar/params";
import {sszTypesFor, type LightClientBootstrap, type LightClientUpdate, type Root} from "@lodestar/types";
import {Bucket} from "./buckets.ts";
import {decodeUint64BE, encodeUint64BE} from "./keys.ts";
import {type DbOp, type LevelDb, Repository} from "./repository.ts";

/** A light-client object with the fork whose type it has (the fork of its attested or own header). */
export interface Forked<T> {
  fork: ForkPostAltair;
  value: T;
}

/** `fork seq (1 byte) ‖ SSZ of the fork's type`: the type differs per fork, the byte says which. */
function encode<T>(fork: ForkPostAltair, bytes: (fork: ForkPostAltair) => Uint8Array): Uint8Array {
  const body = bytes(fork);
  const out = new Uint8Array(1 + body.length);
  out[0] = ForkSeq[fork];
  out.set(body, 1);
  return out;
}

function decodeFork(stored: Uint8Array): ForkPostAltair {
  const fork = ForkSeq[stored[0]] as ForkName | undefined;
  if (!fork || !isForkPostAltair(fork)) throw new Error(`stored light-client value has an unknown fork byte ${stored[0]}`);
  return fork;
}

/** The best LightClientUpdate of each sync-committee period (spec `is_better_update`), by period. */
export class LightClientUpdateRepository extends Repository {
  constructor(db: LevelDb) {
    super(db, Bucket.lightClientBestUpdate);
  }

  async get(period: number): Promise<Forked<LightClientUpdate> | null> {
    const stored = await this.getRaw(encodeUint64BE(period));
    if (!stored) return null;
    const fork = decodeFork(stored);
    return {fork, value: sszTypesFor(fork).LightClientUpdate.deserialize(stored.subarray(1))};
  }

  put(period: number, update: Forked<LightClientUpdate>): Promise<void> {
    return this.write([this.putRawOp(encodeUint64BE(period), encode(update.fork, (f) => sszTypesFor(f).LightClientUpdate.serialize(update.value)))]);
  }

  /** The periods stored, ascending. */
  async periods(): Promise<number[]> {
    return (await this.keys()).map(decodeUint64BE);
  }
}

/** LightClientBootstraps of finalized checkpoint blocks, by block root. */
export class LightClientBootstrapRepository extends Repository {
  constructor(db: LevelDb) {
    super(db, Bucket.lightClientBootstrap);
  }

  async get(blockRoot: Root): Promise<Forked<LightClientBootstrap> | null> {
    const stored = await this.getRaw(blockRoot);
    if (!stored) return null;
    const fork = decodeFork(stored);
    return {fork, value: sszTypesFor(fork).LightClientBootstrap.deserialize(stored.subarray(1))};
  }

  has(blockRoot: Root): Promise<boolean> {
    return this.hasRaw(blockRoot);
  }

  putOp(blockRoot: Root, bootstrap: Forked<LightClientBootstrap>): DbOp {
    return this.putRawOp(blockRoot, encode(bootstrap.fork, (f) => sszTypesFor(f).LightClientBootstrap.serialize(bootstrap.value)));
  }

  put(blockRoot: Root, bootstrap: Forked<LightClientBootstrap>): Promise<void> {
    return this.write([this.putOp(blockRoot, bootstrap)]);
  }
}

import type {ChainForkConfig} from "@lodestar/config";
import {toRootHex} from "@lodestar/utils";
import {Bucket} from "./buckets.ts";
import {slotOfSignedBlockBytes} from "./blocks.ts";
import {ChainMetaRepository} from "./chainMeta.ts";
import {describeLevelDamage} from "./damage.ts";
import {bucketKey, bucketRange, decodeUint64BE, encodeUint64BE} from "./keys.ts";
import type {LevelDb} from "./repository.ts";
import {bucketName} from "./repository.ts";
import {slotOfStateBytes} from "./stateArchive.ts";

/** One damaged record (or a missing one), with the full LevelDB key to delete when repairing. */
export interface DbProblem {
  /** what and where, e.g. `block 0x12…` */
  where: string;
  what: string;
  /** the damaged record's full key (bucket byte included), when there is one to drop */
  key?: Uint8Array;
  /** the problem is in the unfinalized part of the chain (or its checkpoints): repair rolls back to the last good finalized state */
  hot: boolean;
}

export interface GoodState {
  slot: number;
  stateRoot: Uint8Array;
}

export interface CheckReport {
  /** records read (every key of every bucket) */
  records: number;
  problems: DbProblem[];
  /** the archived finalized states whose bytes decode and hash to their index entry, ascending by slot */
  goodStates: GoodState[];
  /** roots (0x hex) of the blocks whose bytes decode and hash to their key */
  goodBlocks: ReadonlySet<string>;
}

const REQUIRED_META = ["genesisTime", "genesisValidatorsRoot", "anchorCheckpoint", "finalizedCheckpoint", "justifiedCheckpoint", "chainFingerprint"] as const;
const HOT_META = new Set(["finalizedCheckpoint", "justifiedCheckpoint", "headRoot"]);

/**
 * Reads every record of the database and reports what is damaged: records LevelDB cannot read,
 * values that do not decode, blocks and states whose hash_tree_root is not their key, index
 * entries pointing at missing or damaged records, missing chain meta. Sidecars and light-client
 * data are read (LevelDB checks their checksums) but not decoded.
 */
export async function checkDb(db: LevelDb, config: ChainForkConfig): Promise<CheckReport> {
  const problems: DbProblem[] = [];
  let records = 0;
  const read = async (bucket: Bucket, each: (key: Uint8Array, value: Uint8Array) => void): Promise<void> => {
    try {
      for await (const [key, value] of db.iterator(bucketRange(bucket))) {
        records++;
        each(key.subarray(1), value);
      }
    } catch (err) {
      const damage = describeLevelDamage(err);
      if (damage === null) throw err;
      problems.push({where: bucketName(bucket), what: `unreadable after ${records} records: ${damage}`, hot: bucket === Bucket.hotBlock});
    }
  };
  const bad = (bucket: Bucket, suffix: Uint8Array, label: string, what: string, hot: boolean): void => {
    problems.push({where: `${label} 0x${Buffer.from(suffix).toString("hex")}`, what, key: bucketKey(bucket, suffix), hot});
  };

  // blocks: root → slot of every block whose bytes decode and hash to their key
  const blocks = new Map<string, number>();
  await read(Bucket.block, (key, value) => {
    const problem = blockProblem(config, key, value);
    if (problem) bad(Bucket.block, key, "block", problem, false);
    else blocks.set(toRootHex(key), slotOfSignedBlockBytes(value));
  });

  // archived states: slot → root of every state that decodes and whose slot is its key
  const states = new Map<number, Uint8Array>();
  await read(Bucket.stateArchive, (key, value) => {
    try {
      if (key.length !== 8) throw new Error(`key of ${key.length} bytes, not 8`);
      const slot = decodeUint64BE(key);
      if (slotOfStateBytes(value) !== slot) throw new Error(`holds a state of slot ${slotOfStateBytes(value)}`);
      states.set(slot, config.getForkTypes(slot).BeaconState.deserializeToViewDU(value).hashTreeRoot());
    } catch (e) {
      bad(Bucket.stateArchive, key, "archived state", `undecodable: ${(e as Error).message}`, false);
    }
  });
  const indexedStates = new Set<number>();
  await read(Bucket.stateRootIndex, (key, value) => {
    const slot = value.length === 8 ? decodeUint64BE(value) : null;
    const root = slot === null ? undefined : states.get(slot);
    if (slot === null || key.length !== 32) bad(Bucket.stateRootIndex, key, "state root index", "undecodable entry", false);
    else if (root === undefined) bad(Bucket.stateRootIndex, key, "state root index", `points to slot ${slot}, where no readable state is archived`, false);
    else if (!bytesEqual(root, key)) {
      bad(Bucket.stateRootIndex, key, "state root index", `the state archived at slot ${slot} hashes to ${toRootHex(root)}, not to its key: its bytes are damaged`, false);
      bad(Bucket.stateArchive, encodeUint64BE(slot), "archived state", `hash_tree_root ${toRootHex(root)} is not ${toRootHex(key)}, the root it was stored under`, false);
      states.delete(slot);
    } else indexedStates.add(slot);
  });
  for (const slot of states.keys()) {
    if (!indexedStates.has(slot)) bad(Bucket.stateArchive, encodeUint64BE(slot), "archived state", "no state root index entry: its root cannot be verified", false);
  }
  const goodStates = [...indexedStates].sort((a, b) => a - b).map((slot) => ({slot, stateRoot: states.get(slot)!}));

  await read(Bucket.canonicalBlockRoot, (key, value) => {
    if (key.length !== 8 || value.length !== 32) bad(Bucket.canonicalBlockRoot, key, "canonical index", "undecodable entry", false);
    else if (blocks.get(toRootHex(value)) !== decodeUint64BE(key)) {
      problems.push({where: `canonical index slot ${decodeUint64BE(key)}`, what: `points to block ${toRootHex(value)}, missing or damaged`, key: bucketKey(Bucket.canonicalBlockRoot, key), hot: false});
    }
  });
  await read(Bucket.hotBlock, (key, value) => {
    if (key.length !== 40 || value.length > 1) bad(Bucket.hotBlock, key, "unfinalized block index", "undecodable entry", true);
    else if (blocks.get(toRootHex(key.subarray(8))) !== decodeUint64BE(key.subarray(0, 8))) {
      bad(Bucket.hotBlock, key, "unfinalized block index", `points to block ${toRootHex(key.subarray(8))}, missing or damaged`, true);
    }
  });

  const meta = new ChainMetaRepository(db);
  const names = new Set<string>();
  await read(Bucket.chainMeta, (key) => void names.add(new TextDecoder().decode(key)));
  for (const field of Object.values(meta)) {
    if (!names.has(field.name)) {
      if ((REQUIRED_META as readonly string[]).includes(field.name)) problems.push({where: `chain meta ${field.name}`, what: "missing", hot: HOT_META.has(field.name)});
      continue;
    }
    try {
      const value = await field.get();
      if (field.name === "finalizedCheckpoint" && !blocks.has(toRootHex((value as {root: Uint8Array}).root))) {
        problems.push({where: "chain meta finalizedCheckpoint", what: `its block ${toRootHex((value as {root: Uint8Array}).root)} is missing or damaged`, hot: true});
      }
    } catch (e) {
      problems.push({where: `chain meta ${field.name}`, what: `undecodable: ${(e as Error).message}`, key: bucketKey(Bucket.chainMeta, new TextEncoder().encode(field.name)), hot: HOT_META.has(field.name)});
    }
  }
  if (goodStates.length === 0) problems.push({where: "state archive", what: "no archived state is readable: the node has nothing to start from", hot: true});

  for (const bucket of [Bucket.blobSidecars, Bucket.dataColumnSidecar, Bucket.lightClientBestUpdate, Bucket.lightClientBootstrap]) await read(bucket, () => {});
  const known = new Set<number>(Object.values(Bucket));
  await readUnknownBuckets(db, known, problems, () => records++);
  return {records, problems, goodStates, goodBlocks: new Set(blocks.keys())};
}

function blockProblem(config: ChainForkConfig, key: Uint8Array, value: Uint8Array): string | null {
  if (key.length !== 32) return `key of ${key.length} bytes, not a 32-byte root`;
  try {
    const block = config.getForkTypes(slotOfSignedBlockBytes(value)).SignedBeaconBlock.deserialize(value);
    const root = config.getForkTypes(block.message.slot).BeaconBlock.hashTreeRoot(block.message as never);
    return bytesEqual(root, key) ? null : `hash_tree_root ${toRootHex(root)} is not its key: its bytes are damaged`;
  } catch (e) {
    return `undecodable: ${(e as Error).message}`;
  }
}

async function readUnknownBuckets(db: LevelDb, known: Set<number>, problems: DbProblem[], count: () => void): Promise<void> {
  for (let bucket = 0; bucket < 256; bucket++) {
    if (known.has(bucket)) continue;
    const [first] = await db.keys({gte: Uint8Array.of(bucket), lt: bucket === 255 ? undefined : Uint8Array.of(bucket + 1), limit: 1}).all();
    if (!first) continue;
    count();
    problems.push({where: `bucket ${bucket}`, what: "a bucket this version does not know (a newer version's data dir, or damage)", hot: false});
  }
}

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

import {join} from "node:path";
import {Level} from "level";
import {toHex} from "@lodestar/utils";
import {collapseAt, importTarget, mergeBlocks, pruneTarget, type Watermark} from "./historyMerge.ts";
import {historiesByPubkey, InterchangeError, type SignedAttestationRecord, type SignedBlockRecord, type ValidatorHistory} from "./interchange.ts";

/**
 * Slashing protection (phase0 beacon-chain.md, "is_slashable_attestation_data" and the
 * proposer slashing condition), kept in a LevelDB under the validator data dir.
 *
 * - Blocks: per pubkey the highest slot signed and its signing root. A proposal at a lower
 *   slot is refused, and at the same slot unless it is the very same block (same root).
 * - Attestations: per pubkey every signed (source, target, signing root), keyed by target
 *   epoch. Refused: another vote for a target already voted for (double vote), a vote that
 *   surrounds an earlier one and a vote surrounded by an earlier one. Re-signing the exact
 *   same data is allowed.
 * - A low watermark per pubkey, set by an EIP-3076 import or by pruning (historyMerge.ts):
 *   no vote with a source below it or a target at or below it, except a repeat of the record
 *   kept at its target. A record without a signing root (imported so) is never repeated.
 * - The genesis validators root of the chain the records belong to.
 *
 * Every accepted message is written with `sync: true` before the check resolves, so the
 * record is on disk before the caller may release a signature. Checks of one pubkey run one
 * after the other (check-then-write is atomic per key). Import, export and pruning expect no
 * checks running meanwhile: the validator client prunes before its first duty, and the
 * `slashing-protection` command opens the database only while no validator client holds it.
 */
export type SlashingKind =
  | "double_proposal"
  | "old_proposal"
  | "double_vote"
  | "surrounding_vote"
  | "surrounded_vote"
  | "old_vote"
  | "invalid_vote";

export class SlashingProtectionError extends Error {
  readonly kind: SlashingKind;
  constructor(kind: SlashingKind, message: string) {
    super(message);
    this.name = "SlashingProtectionError";
    this.kind = kind;
  }
}

export interface AttestationRecord {
  sourceEpoch: number;
  targetEpoch: number;
  signingRoot: Uint8Array;
}

interface StoredBlock {
  slot: number;
  /** null: imported without a root, so no block at this slot is signed */
  signingRoot: string | null;
}

interface StoredAttestation {
  source: number;
  target: number;
  signingRoot: string | null;
}

type Stored = StoredBlock | StoredAttestation | Watermark | string;
type BatchOp = {type: "put"; key: string; value: Stored} | {type: "del"; key: string};

export interface ImportSummary {
  validators: number;
  blocks: number;
  attestations: number;
}

/** Wide enough for any safe integer; keeps the byte order of keys equal to the numeric order. */
const EPOCH_DIGITS = 16;
const SYNC_WRITE = {sync: true};
const GENESIS_VALIDATORS_ROOT_KEY = "meta:genesis_validators_root";
/** Attestation history kept per validator below its newest target (about 2.3 days on mainnet): far beyond any reorg. */
export const ATTESTATION_HISTORY_EPOCHS = 512;

/** Where a validator data dir keeps its slashing protection database. */
export function slashingProtectionDir(dataDir: string): string {
  return join(dataDir, "slashing-protection");
}

function blockKey(pubkey: string): string {
  return `block:${pubkey}`;
}

function watermarkKey(pubkey: string): string {
  return `low:${pubkey}`;
}

function attestationPrefix(pubkey: string): string {
  return `att:${pubkey}:`;
}

function attestationKey(pubkey: string, target: number): string {
  return attestationPrefix(pubkey) + String(target).padStart(EPOCH_DIGITS, "0");
}

type Verdict = "repeat" | "new";

/** true for a verdict, false for a refusal (SlashingProtectionError); other errors pass on. */
function allows(verdict: Promise<Verdict>): Promise<boolean> {
  return verdict.then(
    () => true,
    (e: unknown) => {
      if (e instanceof SlashingProtectionError) return false;
      throw e;
    }
  );
}

const toRecord = (a: StoredAttestation): SignedAttestationRecord => ({source: a.source, target: a.target, signingRoot: a.signingRoot});

export class SlashingProtection {
  private readonly db: Level<string, Stored>;
  /** Tail of the queue of checks per pubkey. */
  private readonly queues = new Map<string, Promise<unknown>>();

  private constructor(db: Level<string, Stored>) {
    this.db = db;
  }

  /** Opens (creating if needed) the slashing protection database in `dir`. */
  static async open(dir: string, opts: {createIfMissing?: boolean} = {}): Promise<SlashingProtection> {
    const db = new Level<string, Stored>(dir, {valueEncoding: "json", createIfMissing: opts.createIfMissing ?? true});
    await db.open();
    return new SlashingProtection(db);
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.queues.values());
    await this.db.close();
  }

  /** The genesis validators root of the chain the records are for (lowercase 0x hex), or null before any is bound. */
  async genesisValidatorsRoot(): Promise<string | null> {
    return ((await this.db.get(GENESIS_VALIDATORS_ROOT_KEY)) as string | undefined) ?? null;
  }

  /** Binds the records to the chain of this genesis validators root; throws if they belong to another chain. */
  async bindToChain(genesisValidatorsRoot: Uint8Array | string): Promise<void> {
    const hex = typeof genesisValidatorsRoot === "string" ? genesisValidatorsRoot.toLowerCase() : toHex(genesisValidatorsRoot);
    const bound = await this.genesisValidatorsRoot();
    if (bound === null) await this.db.put(GENESIS_VALIDATORS_ROOT_KEY, hex, SYNC_WRITE);
    else if (bound !== hex) {
      throw new Error(`the slashing protection records are for genesis validators root ${bound}, and the beacon node's chain has ${hex}: another chain`);
    }
  }

  /** Resolves once a block at `slot` with `signingRoot` is safe to sign and recorded; throws SlashingProtectionError if not. */
  checkAndInsertBlockProposal(pubkey: Uint8Array, slot: number, signingRoot: Uint8Array): Promise<void> {
    const key = toHex(pubkey);
    return this.serialized(key, async () => {
      const root = toHex(signingRoot);
      if ((await this.blockVerdict(key, slot, root)) === "new") await this.db.put(blockKey(key), {slot, signingRoot: root}, SYNC_WRITE);
    });
  }

  /** Resolves once the attestation is safe to sign and recorded; throws SlashingProtectionError if not. */
  checkAndInsertAttestation(pubkey: Uint8Array, attestation: AttestationRecord): Promise<void> {
    const key = toHex(pubkey);
    return this.serialized(key, async () => {
      const {sourceEpoch: source, targetEpoch: target} = attestation;
      const root = toHex(attestation.signingRoot);
      if ((await this.attestationVerdict(key, source, target, root)) === "new") {
        await this.db.put(attestationKey(key, target), {source, target, signingRoot: root}, SYNC_WRITE);
      }
    });
  }

  /** Whether a block would be signed now; records nothing. */
  wouldSignBlock(pubkey: Uint8Array, slot: number, signingRoot: Uint8Array): Promise<boolean> {
    const key = toHex(pubkey);
    return this.serialized(key, () => allows(this.blockVerdict(key, slot, toHex(signingRoot))));
  }

  /** Whether an attestation would be signed now; records nothing. */
  wouldSignAttestation(pubkey: Uint8Array, attestation: AttestationRecord): Promise<boolean> {
    const key = toHex(pubkey);
    const {sourceEpoch, targetEpoch, signingRoot} = attestation;
    return this.serialized(key, () => allows(this.attestationVerdict(key, sourceEpoch, targetEpoch, toHex(signingRoot))));
  }

  /** "repeat" for the very message recorded already, "new" for a safe new one; throws SlashingProtectionError if it is not safe. */
  private async blockVerdict(key: string, slot: number, root: string): Promise<Verdict> {
    const last = (await this.db.get(blockKey(key))) as StoredBlock | undefined;
    if (last !== undefined) {
      if (slot === last.slot && root === last.signingRoot) return "repeat";
      if (slot === last.slot) {
        throw new SlashingProtectionError("double_proposal", `already signed another block at slot ${slot}`);
      }
      if (slot < last.slot) {
        throw new SlashingProtectionError("old_proposal", `slot ${slot} is before the last signed proposal at slot ${last.slot}`);
      }
    }
    return "new";
  }

  private async attestationVerdict(key: string, source: number, target: number, root: string): Promise<Verdict> {
    if (source > target) {
      throw new SlashingProtectionError("invalid_vote", `source epoch ${source} is after target epoch ${target}`);
    }
    const sameTarget = (await this.db.get(attestationKey(key, target))) as StoredAttestation | undefined;
    if (sameTarget !== undefined) {
      if (sameTarget.signingRoot === root) return "repeat";
      throw new SlashingProtectionError("double_vote", `already voted differently for target epoch ${target}`);
    }
    const low = (await this.db.get(watermarkKey(key))) as Watermark | undefined;
    if (low !== undefined && (source < low.source || target <= low.target)) {
      throw new SlashingProtectionError(
        "old_vote",
        `vote ${source}->${target} is not above the watermark ${low.source}->${low.target} of imported or pruned history`
      );
    }
    // An earlier vote surrounded by this one has source > new source, hence target in (source, target).
    for await (const prior of this.db.values({gt: attestationKey(key, source), lt: attestationKey(key, target)})) {
      const vote = prior as StoredAttestation;
      if (vote.source > source) {
        throw new SlashingProtectionError("surrounding_vote", `vote ${source}->${target} surrounds earlier vote ${vote.source}->${vote.target}`);
      }
    }
    // An earlier vote surrounding this one has target > new target and source < new source.
    for await (const prior of this.db.values({gt: attestationKey(key, target), lt: attestationPrefix(key) + "~"})) {
      const vote = prior as StoredAttestation;
      if (vote.source < source) {
        throw new SlashingProtectionError("surrounded_vote", `vote ${source}->${target} is surrounded by earlier vote ${vote.source}->${vote.target}`);
      }
    }
    return "new";
  }

  /** Every validator's records, by pubkey: the block record and the attestations by target epoch. */
  async exportHistory(): Promise<ValidatorHistory[]> {
    const byKey = new Map<string, ValidatorHistory>();
    const history = (pubkey: string): ValidatorHistory => {
      let h = byKey.get(pubkey);
      if (!h) byKey.set(pubkey, (h = {pubkey, blocks: [], attestations: []}));
      return h;
    };
    for await (const [key, value] of this.db.iterator({gt: "att:", lt: "att:~"})) {
      history(key.slice("att:".length, key.lastIndexOf(":"))).attestations.push(toRecord(value as StoredAttestation));
    }
    for await (const [key, value] of this.db.iterator({gt: "block:", lt: "block:~"})) {
      const block = value as StoredBlock;
      history(key.slice("block:".length)).blocks.push({slot: block.slot, signingRoot: block.signingRoot});
    }
    return [...byKey.values()].sort((a, b) => (a.pubkey < b.pubkey ? -1 : a.pubkey > b.pubkey ? 1 : 0));
  }

  /** The records of these pubkeys (0x hex), those with any. */
  async historyOf(pubkeys: string[]): Promise<ValidatorHistory[]> {
    const out: ValidatorHistory[] = [];
    for (const pubkey of pubkeys) {
      const attestations: SignedAttestationRecord[] = [];
      for await (const value of this.db.values({gte: attestationPrefix(pubkey), lt: attestationPrefix(pubkey) + "~"})) attestations.push(toRecord(value as StoredAttestation));
      const block = (await this.db.get(blockKey(pubkey))) as StoredBlock | undefined;
      const blocks = block ? [{slot: block.slot, signingRoot: block.signingRoot}] : [];
      if (attestations.length > 0 || blocks.length > 0) out.push({pubkey, blocks, attestations});
    }
    return out;
  }

  /** Resolves once every check of this pubkey (0x hex) asked for so far has settled. */
  async idle(pubkey: string): Promise<void> {
    await this.queues.get(pubkey);
  }

  /**
   * Merges an interchange's histories into the records, all in one atomic write: blocks up to
   * their highest slot, attestations folded into the watermark at their highest target
   * (historyMerge.ts). Nothing already recorded gets less protected. Refused, changing
   * nothing, when the records are bound to another genesis validators root; binds them if
   * they are not bound yet.
   */
  async importHistory(genesisValidatorsRoot: string, data: ValidatorHistory[]): Promise<ImportSummary> {
    const ops: BatchOp[] = [];
    const bound = await this.genesisValidatorsRoot();
    if (bound === null) ops.push({type: "put", key: GENESIS_VALIDATORS_ROOT_KEY, value: genesisValidatorsRoot});
    else if (bound !== genesisValidatorsRoot) {
      throw new InterchangeError(`the file is for genesis validators root ${genesisValidatorsRoot}, but these slashing protection records are for ${bound}: another chain`);
    }
    const histories = historiesByPubkey(data);
    for (const {pubkey, blocks, attestations} of histories) {
      const block = mergeBlocks((await this.db.get(blockKey(pubkey))) as StoredBlock | undefined, blocks);
      if (block) ops.push({type: "put", key: blockKey(pubkey), value: block});
      const low = (await this.db.get(watermarkKey(pubkey))) as Watermark | undefined;
      const target = importTarget(attestations, low);
      if (target !== undefined) for (const op of await this.collapse(pubkey, target, attestations, low)) ops.push(op);
    }
    if (ops.length > 0) await this.db.batch(ops, SYNC_WRITE);
    return {
      validators: histories.length,
      blocks: histories.reduce((n, h) => n + h.blocks.length, 0),
      attestations: histories.reduce((n, h) => n + h.attestations.length, 0),
    };
  }

  /**
   * Folds each validator's attestations older than `keepEpochs` before its newest target into
   * the watermark (historyMerge.ts), in one atomic write. Resolves to the records removed.
   * The validator client prunes so at start, before any duty.
   */
  async pruneAttestations(keepEpochs = ATTESTATION_HISTORY_EPOCHS): Promise<number> {
    const ops: BatchOp[] = [];
    for (const {pubkey, attestations} of await this.exportHistory()) {
      const target = pruneTarget(
        attestations.map((a) => a.target),
        keepEpochs
      );
      if (target === undefined) continue;
      const low = (await this.db.get(watermarkKey(pubkey))) as Watermark | undefined;
      for (const op of await this.collapse(pubkey, target, [], low)) ops.push(op);
    }
    if (ops.length > 0) await this.db.batch(ops, SYNC_WRITE);
    return ops.filter((op) => op.type === "del").length;
  }

  /** The writes that fold a pubkey's stored records at or below `target`, with `imported`, into the watermark at `target`. */
  private async collapse(pubkey: string, target: number, imported: SignedAttestationRecord[], low: Watermark | undefined): Promise<BatchOp[]> {
    const stored: SignedAttestationRecord[] = [];
    for await (const value of this.db.values({gte: attestationPrefix(pubkey), lte: attestationKey(pubkey, target)})) {
      stored.push(toRecord(value as StoredAttestation));
    }
    const {record, watermark, removed} = collapseAt(target, stored, imported, low);
    return [
      ...removed.map((t): BatchOp => ({type: "del", key: attestationKey(pubkey, t)})),
      {type: "put", key: attestationKey(pubkey, target), value: record},
      {type: "put", key: watermarkKey(pubkey), value: watermark},
    ];
  }

  /** Runs `task` after every earlier task of the same pubkey has settled. */
  private serialized<T>(pubkey: string, task: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(pubkey) ?? Promise.resolve();
    const run = previous.then(task, task);
    const tail = run.catch(() => undefined);
    this.queues.set(pubkey, tail);
    void tail.then(() => {
      if (this.queues.get(pubkey) === tail) this.queues.delete(pubkey);
    });
    return run;
  }
}

import {Level} from "level";
import {toHex} from "@lodestar/utils";

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
 *
 * Every accepted message is written with `sync: true` before the check resolves, so the
 * record is on disk before the caller may release a signature. Checks of one pubkey run one
 * after the other (check-then-write is atomic per key).
 */
export type SlashingKind = "double_proposal" | "old_proposal" | "double_vote" | "surrounding_vote" | "surrounded_vote" | "invalid_vote";

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
  signingRoot: string;
}

interface StoredAttestation {
  source: number;
  target: number;
  signingRoot: string;
}

type Stored = StoredBlock | StoredAttestation;

/** Wide enough for any safe integer; keeps the byte order of keys equal to the numeric order. */
const EPOCH_DIGITS = 16;
const SYNC_WRITE = {sync: true};

function blockKey(pubkey: string): string {
  return `block:${pubkey}`;
}

function attestationPrefix(pubkey: string): string {
  return `att:${pubkey}:`;
}

function attestationKey(pubkey: string, target: number): string {
  return attestationPrefix(pubkey) + String(target).padStart(EPOCH_DIGITS, "0");
}

export class SlashingProtection {
  private readonly db: Level<string, Stored>;
  /** Tail of the queue of checks per pubkey. */
  private readonly queues = new Map<string, Promise<unknown>>();

  private constructor(db: Level<string, Stored>) {
    this.db = db;
  }

  /** Opens (creating if needed) the slashing protection database in `dir`. */
  static async open(dir: string): Promise<SlashingProtection> {
    const db = new Level<string, Stored>(dir, {valueEncoding: "json"});
    await db.open();
    return new SlashingProtection(db);
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.queues.values());
    await this.db.close();
  }

  /** Resolves once a block at `slot` with `signingRoot` is safe to sign and recorded; throws SlashingProtectionError if not. */
  checkAndInsertBlockProposal(pubkey: Uint8Array, slot: number, signingRoot: Uint8Array): Promise<void> {
    const key = toHex(pubkey);
    return this.serialized(key, async () => {
      const root = toHex(signingRoot);
      const last = (await this.db.get(blockKey(key))) as StoredBlock | undefined;
      if (last !== undefined) {
        if (slot === last.slot && root === last.signingRoot) return;
        if (slot === last.slot) {
          throw new SlashingProtectionError("double_proposal", `already signed another block at slot ${slot}`);
        }
        if (slot < last.slot) {
          throw new SlashingProtectionError("old_proposal", `slot ${slot} is before the last signed proposal at slot ${last.slot}`);
        }
      }
      await this.db.put(blockKey(key), {slot, signingRoot: root}, SYNC_WRITE);
    });
  }

  /** Resolves once the attestation is safe to sign and recorded; throws SlashingProtectionError if not. */
  checkAndInsertAttestation(pubkey: Uint8Array, attestation: AttestationRecord): Promise<void> {
    const key = toHex(pubkey);
    return this.serialized(key, async () => {
      const {sourceEpoch: source, targetEpoch: target} = attestation;
      const root = toHex(attestation.signingRoot);
      if (source > target) {
        throw new SlashingProtectionError("invalid_vote", `source epoch ${source} is after target epoch ${target}`);
      }
      const sameTarget = (await this.db.get(attestationKey(key, target))) as StoredAttestation | undefined;
      if (sameTarget !== undefined) {
        if (sameTarget.signingRoot === root) return;
        throw new SlashingProtectionError("double_vote", `already voted differently for target epoch ${target}`);
      }
      // An earlier vote surrounded by this one has source > new source, hence target in (source, target).
      for await (const prior of this.db.values({gt: attestationKey(key, source), lt: attestationKey(key, target)})) {
        const vote = prior as StoredAttestation;
        if (vote.source > source) {
          throw new SlashingProtectionError(
            "surrounding_vote",
            `vote ${source}->${target} surrounds earlier vote ${vote.source}->${vote.target}`
          );
        }
      }
      // An earlier vote surrounding this one has target > new target and source < new source.
      for await (const prior of this.db.values({gt: attestationKey(key, target), lt: attestationPrefix(key) + "~"})) {
        const vote = prior as StoredAttestation;
        if (vote.source < source) {
          throw new SlashingProtectionError(
            "surrounded_vote",
            `vote ${source}->${target} is surrounded by earlier vote ${vote.source}->${vote.target}`
          );
        }
      }
      await this.db.put(attestationKey(key, target), {source, target, signingRoot: root}, SYNC_WRITE);
    });
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

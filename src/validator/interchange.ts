/**
 * The EIP-3076 slashing protection interchange format, version 5: parsing (with every check
 * of its JSON schema, so a bad file is rejected whole, naming the first bad field) and
 * writing, in the complete form (every record kept) or the minimal one (per validator, the
 * highest block and one attestation at the highest source and target epochs).
 *
 * Integers are decimal strings; roots and public keys `0x` hex, kept lowercase here. An
 * absent `signing_root` is `null`: a message known to be signed but whose content is not,
 * so no new message at its slot or target epoch is ever taken for a repeat of it.
 */

export const INTERCHANGE_FORMAT_VERSION = "5";

export interface SignedBlockRecord {
  slot: number;
  signingRoot: string | null;
}

export interface SignedAttestationRecord {
  source: number;
  target: number;
  signingRoot: string | null;
}

/** One validator's signing history; `pubkey` is lowercase `0x` hex of the 48-byte key. */
export interface ValidatorHistory {
  pubkey: string;
  blocks: SignedBlockRecord[];
  attestations: SignedAttestationRecord[];
}

export interface Interchange {
  /** lowercase `0x` hex */
  genesisValidatorsRoot: string;
  data: ValidatorHistory[];
}

export type InterchangeForm = "complete" | "minimal";

/** A file that is not a valid interchange, or one that does not fit the database. */
export class InterchangeError extends Error {}

/** The JSON of an interchange file, field for field as EIP-3076 names them. */
export interface InterchangeJson {
  metadata: {interchange_format_version: string; genesis_validators_root: string};
  data: Array<{
    pubkey: string;
    signed_blocks: Array<{slot: string; signing_root?: string}>;
    signed_attestations: Array<{source_epoch: string; target_epoch: string; signing_root?: string}>;
  }>;
}

/** What a bad field shows of itself: bounded, so a huge value never floods a message. */
function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function object(value: unknown, path: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new InterchangeError(`${path}: expected an object, got ${shown(value)}`);
  return value as Record<string, unknown>;
}

function array(value: unknown, path: string): unknown[] {
  if (!Array.isArray(value)) throw new InterchangeError(`${path}: expected an array, got ${shown(value)}`);
  return value;
}

function decimal(value: unknown, path: string): number {
  if (typeof value !== "string" || !/^[0-9]{1,20}$/.test(value)) throw new InterchangeError(`${path}: expected a decimal integer string, got ${shown(value)}`);
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new InterchangeError(`${path}: ${value} is too large`);
  return n;
}

function hex(value: unknown, bytes: number, path: string): string {
  if (typeof value !== "string" || !new RegExp(`^0x[0-9a-fA-F]{${bytes * 2}}$`).test(value)) {
    throw new InterchangeError(`${path}: expected 0x and ${bytes} bytes of hex, got ${shown(value)}`);
  }
  return value.toLowerCase();
}

function optionalRoot(value: unknown, path: string): string | null {
  return value === undefined ? null : hex(value, 32, path);
}

/** Checks a parsed JSON document against the format; the model of a valid one, else InterchangeError. */
export function parseInterchange(json: unknown): Interchange {
  const top = object(json, "interchange");
  const metadata = object(top.metadata, "metadata");
  const version = metadata.interchange_format_version;
  if (version !== INTERCHANGE_FORMAT_VERSION) {
    throw new InterchangeError(`metadata.interchange_format_version: only version "${INTERCHANGE_FORMAT_VERSION}" is supported, got ${shown(version)}`);
  }
  const genesisValidatorsRoot = hex(metadata.genesis_validators_root, 32, "metadata.genesis_validators_root");
  const data = array(top.data, "data").map((item, i): ValidatorHistory => {
    const entry = object(item, `data[${i}]`);
    const at = `data[${i}]`;
    return {
      pubkey: hex(entry.pubkey, 48, `${at}.pubkey`),
      blocks: array(entry.signed_blocks, `${at}.signed_blocks`).map((b, j) => {
        const block = object(b, `${at}.signed_blocks[${j}]`);
        return {slot: decimal(block.slot, `${at}.signed_blocks[${j}].slot`), signingRoot: optionalRoot(block.signing_root, `${at}.signed_blocks[${j}].signing_root`)};
      }),
      attestations: array(entry.signed_attestations, `${at}.signed_attestations`).map((a, j) => {
        const att = object(a, `${at}.signed_attestations[${j}]`);
        const path = `${at}.signed_attestations[${j}]`;
        return {
          source: decimal(att.source_epoch, `${path}.source_epoch`),
          target: decimal(att.target_epoch, `${path}.target_epoch`),
          signingRoot: optionalRoot(att.signing_root, `${path}.signing_root`),
        };
      }),
    };
  });
  return {genesisValidatorsRoot, data};
}

/** The largest of `values`, or `floor` when it is larger or there are none (no spread: histories can be long). */
export function maxOf(values: Iterable<number>, floor = -Infinity): number {
  let max = floor;
  for (const v of values) if (v > max) max = v;
  return max;
}

/** Per validator, every entry of one pubkey merged into one history (the format allows repeats). */
export function historiesByPubkey(data: ValidatorHistory[]): ValidatorHistory[] {
  const byKey = new Map<string, ValidatorHistory>();
  for (const entry of data) {
    const merged = byKey.get(entry.pubkey);
    if (merged) {
      merged.blocks = merged.blocks.concat(entry.blocks);
      merged.attestations = merged.attestations.concat(entry.attestations);
    } else byKey.set(entry.pubkey, {pubkey: entry.pubkey, blocks: [...entry.blocks], attestations: [...entry.attestations]});
  }
  return [...byKey.values()];
}

/**
 * The minimal form of a history: the highest block, and one attestation at the highest
 * source and the highest target epochs. A signing root is kept only where the record is a
 * real one (the attestation at the highest target has the highest source, and is the only one).
 */
export function minimalHistory(history: ValidatorHistory): ValidatorHistory {
  const {blocks, attestations} = history;
  const out: ValidatorHistory = {pubkey: history.pubkey, blocks: [], attestations: []};
  if (blocks.length > 0) {
    const slot = maxOf(blocks.map((b) => b.slot));
    const atSlot = blocks.filter((b) => b.slot === slot);
    out.blocks.push({slot, signingRoot: atSlot.length === 1 ? atSlot[0].signingRoot : null});
  }
  if (attestations.length > 0) {
    const source = maxOf(attestations.map((a) => a.source));
    const target = maxOf(attestations.map((a) => a.target));
    const atTarget = attestations.filter((a) => a.target === target);
    const real = atTarget.length === 1 && atTarget[0].source === source;
    out.attestations.push({source, target, signingRoot: real ? atTarget[0].signingRoot : null});
  }
  return out;
}

/** The interchange file's JSON for these histories. */
export function interchangeJson(genesisValidatorsRoot: string, histories: ValidatorHistory[], form: InterchangeForm): InterchangeJson {
  const root = (signingRoot: string | null) => (signingRoot === null ? {} : {signing_root: signingRoot});
  return {
    metadata: {interchange_format_version: INTERCHANGE_FORMAT_VERSION, genesis_validators_root: genesisValidatorsRoot},
    data: histories
      .map((h) => (form === "minimal" ? minimalHistory(h) : h))
      .map((h) => ({
        pubkey: h.pubkey,
        signed_blocks: h.blocks.map((b) => ({slot: String(b.slot), ...root(b.signingRoot)})),
        signed_attestations: h.attestations.map((a) => ({source_epoch: String(a.source), target_epoch: String(a.target), ...root(a.signingRoot)})),
      })),
  };
}

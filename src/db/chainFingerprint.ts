import {createChainForkConfig, type ChainConfig, type ChainForkConfig} from "@lodestar/config";
import {ACTIVE_PRESET} from "@lodestar/params";
import type {ChainMetaRepository} from "./chainMeta.ts";

/** The data dir was written for another chain (network, preset or fork schedule differ). */
export class ChainMismatchError extends Error {
  readonly stored: string;
  readonly expected: string;

  constructor(stored: string, expected: string) {
    super(`data dir belongs to another chain: stored ${stored}, this node runs ${expected}; use another data dir or the matching config`);
    this.name = "ChainMismatchError";
    this.stored = stored;
    this.expected = expected;
  }
}

function toHex(bytes: Uint8Array): string {
  return "0x" + Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString("hex");
}

/**
 * A readable fingerprint of the chain a data dir belongs to: network name, preset and the
 * scheduled forks (name, epoch, version). Unscheduled forks are left out, so a library upgrade
 * that only adds a future fork does not lock a node out of its data.
 */
export function chainFingerprint(config: ChainForkConfig): string {
  const forks = config.forksAscendingEpochOrder
    .filter((fork) => Number.isFinite(fork.epoch))
    .map((fork) => `${fork.name}@${fork.epoch}:${toHex(fork.version)}`);
  return JSON.stringify({network: config.CONFIG_NAME, preset: ACTIVE_PRESET, forks});
}

/** Writes the fingerprint into a fresh data dir; throws ChainMismatchError if a different one is stored. */
export async function checkChainFingerprint(meta: ChainMetaRepository, config: ChainForkConfig): Promise<"new" | "match"> {
  const expected = chainFingerprint(config);
  const stored = await meta.chainFingerprint.get();
  if (stored === null) {
    await meta.chainFingerprint.put(expected);
    return "new";
  }
  if (stored !== expected) throw new ChainMismatchError(stored, expected);
  return "match";
}

/**
 * The fork schedule a fingerprint records, as a config for reading the stored blocks and states
 * (the fork types by slot): what `db check` and `db repair` use, needing only the data dir.
 * The preset of the running process must be the fingerprint's.
 */
export function configFromFingerprint(fingerprint: string): ChainForkConfig {
  const {network, preset, forks} = JSON.parse(fingerprint) as {network: string; preset: string; forks: string[]};
  if (preset !== ACTIVE_PRESET) throw new Error(`the data dir is of the ${preset} preset, this process runs ${ACTIVE_PRESET}`);
  const overrides: Record<string, unknown> = {CONFIG_NAME: network};
  for (const name of ["ALTAIR", "BELLATRIX", "CAPELLA", "DENEB", "ELECTRA", "FULU", "GLOAS", "HEZE"]) overrides[`${name}_FORK_EPOCH`] = Infinity;
  for (const fork of forks) {
    const match = /^(\w+)@(\d+):0x([0-9a-f]{8})$/.exec(fork);
    if (!match) throw new Error(`unreadable fork in the chain fingerprint: ${fork}`);
    const name = match[1].toUpperCase();
    const version = Uint8Array.from(Buffer.from(match[3], "hex"));
    if (name === "PHASE0") overrides.GENESIS_FORK_VERSION = version;
    else {
      overrides[`${name}_FORK_EPOCH`] = Number(match[2]);
      overrides[`${name}_FORK_VERSION`] = version;
    }
  }
  return createChainForkConfig(overrides as Partial<ChainConfig>);
}

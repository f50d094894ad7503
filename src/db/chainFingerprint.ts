import type {ChainForkConfig} from "@lodestar/config";
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

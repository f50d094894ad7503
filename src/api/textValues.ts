import {ForkName} from "@lodestar/params";
import {fromHex} from "@lodestar/utils";

/** The text forms that parameters, bodies and metadata fields share: decimals, fixed-length hex, fork names. */

export const DECIMAL = /^[0-9]+$/;

export function hexOfLength(s: string, bytes: number): Uint8Array | undefined {
  return s.length === 2 + 2 * bytes && /^0x[0-9a-fA-F]*$/.test(s) ? fromHex(s) : undefined;
}

/** The consensus versions the Beacon API names (`ConsensusVersion`). */
const API_FORKS = [ForkName.phase0, ForkName.altair, ForkName.bellatrix, ForkName.capella, ForkName.deneb, ForkName.electra, ForkName.fulu] as const;
export function parseFork(s: string): ForkName | undefined {
  return (API_FORKS as readonly string[]).includes(s) ? (s as ForkName) : undefined;
}

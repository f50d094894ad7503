import type {ChainConfig} from "@lodestar/config";
import {NUMBER_OF_COLUMNS} from "@lodestar/params";
import {createHash} from "node:crypto";

/**
 * Data column custody (fulu das-core.md): which custody groups, and so which columns, a node
 * keeps and samples, from its node id and custody group count. Anyone can compute it for any
 * peer from the peer's node id and advertised `cgc`.
 */

type CustodyConfig = Pick<ChainConfig, "NUMBER_OF_CUSTODY_GROUPS" | "SAMPLES_PER_SLOT" | "CUSTODY_REQUIREMENT">;

const UINT256_MAX = (1n << 256n) - 1n;

function uint256ToBytesLE(value: bigint): Uint8Array {
  const bytes = new Uint8Array(32);
  for (let i = 0; i < 32; i++) bytes[i] = Number((value >> BigInt(8 * i)) & 0xffn);
  return bytes;
}

/** get_custody_groups */
export function getCustodyGroups(config: CustodyConfig, nodeId: bigint, custodyGroupCount: number): number[] {
  const groupCount = config.NUMBER_OF_CUSTODY_GROUPS;
  if (custodyGroupCount > groupCount) throw new Error(`custody group count ${custodyGroupCount} is above ${groupCount}`);
  if (custodyGroupCount === groupCount) return Array.from({length: groupCount}, (_, i) => i);
  const groups = new Set<number>();
  let currentId = nodeId;
  while (groups.size < custodyGroupCount) {
    const digest = createHash("sha256").update(uint256ToBytesLE(currentId)).digest();
    groups.add(Number(digest.readBigUInt64LE(0) % BigInt(groupCount)));
    currentId = currentId === UINT256_MAX ? 0n : currentId + 1n;
  }
  return [...groups].sort((a, b) => a - b);
}

/** compute_columns_for_custody_group */
export function columnsForCustodyGroup(config: CustodyConfig, group: number): number[] {
  const groupCount = config.NUMBER_OF_CUSTODY_GROUPS;
  if (group >= groupCount) throw new Error(`custody group ${group} is not below ${groupCount}`);
  const perGroup = NUMBER_OF_COLUMNS / groupCount;
  return Array.from({length: perGroup}, (_, i) => groupCount * i + group);
}

/** The columns of these groups, ascending. */
export function columnsOfGroups(config: CustodyConfig, groups: number[]): number[] {
  return groups.flatMap((g) => columnsForCustodyGroup(config, g)).sort((a, b) => a - b);
}

/** The columns a node samples each slot: those of max(SAMPLES_PER_SLOT, cgc) groups (its custody columns among them). */
export function samplingColumns(config: CustodyConfig, nodeId: bigint, custodyGroupCount: number): number[] {
  const samplingSize = Math.max(config.SAMPLES_PER_SLOT, custodyGroupCount);
  return columnsOfGroups(config, getCustodyGroups(config, nodeId, Math.min(samplingSize, config.NUMBER_OF_CUSTODY_GROUPS)));
}

/**
 * The node's custody group count: every group for a supernode, half of them for a semi-supernode
 * (the columns that rebuild all of them), else the spec's minimum.
 */
export function ourCustodyGroupCount(config: CustodyConfig, supernode: boolean, semiSupernode = false): number {
  if (supernode) return config.NUMBER_OF_CUSTODY_GROUPS;
  return semiSupernode ? Math.max(config.NUMBER_OF_CUSTODY_GROUPS / 2, config.CUSTODY_REQUIREMENT) : config.CUSTODY_REQUIREMENT;
}

/**
 * get_validators_custody_requirement (fulu validator.md): a group per 32 ETH of the attached
 * validators' effective balance, at least VALIDATOR_CUSTODY_REQUIREMENT, at most every group.
 */
export function validatorsCustodyRequirement(
  config: Pick<ChainConfig, "NUMBER_OF_CUSTODY_GROUPS" | "VALIDATOR_CUSTODY_REQUIREMENT" | "BALANCE_PER_ADDITIONAL_CUSTODY_GROUP">,
  effectiveBalances: number[]
): number {
  const total = effectiveBalances.reduce((sum, b) => sum + b, 0);
  const count = Math.floor(total / config.BALANCE_PER_ADDITIONAL_CUSTODY_GROUP);
  return Math.min(Math.max(count, config.VALIDATOR_CUSTODY_REQUIREMENT), config.NUMBER_OF_CUSTODY_GROUPS);
}

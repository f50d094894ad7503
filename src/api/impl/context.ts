import type {IBeaconChain} from "../../chain/interface.ts";
import type {OperationPools} from "../../pools/index.ts";
import {ApiError} from "../errors.ts";

/** What the node itself (not the chain) answers for: identity, settings, sync state. */
export interface NodeContext {
  /** `<name>/<version>-<commit>/<platform>` */
  version: string;
  /** the graffiti used when a block request names none (32 bytes) */
  graffiti(): Uint8Array;
  setProposerFeeRecipient(validatorIndex: number, feeRecipient: Uint8Array): void;
  /** Whether the node is catching up with the network; never when absent (a dev chain that makes its own blocks). */
  isSyncing?(): boolean;
  /** Whether the execution engine is unreachable; never when absent. */
  isElOffline?(): boolean;
}

/** Everything the API handlers see. */
export interface ApiContext {
  chain: IBeaconChain;
  pools: OperationPools;
  node: NodeContext;
}

export function isNodeSyncing(ctx: ApiContext): boolean {
  return ctx.node.isSyncing?.() ?? false;
}

/** The validator endpoints answer 503 while the node is syncing: their answers would be stale. */
export function assertNotSyncing(ctx: ApiContext): void {
  if (isNodeSyncing(ctx)) throw new ApiError(503, "Beacon node is currently syncing and not serving request on that endpoint");
}

import type {bellatrix} from "@lodestar/types";
import {SLOTS_PER_EPOCH, type ForkName} from "@lodestar/params";
import type {ExecutionPayload, SignedBlindedBeaconBlock} from "@lodestar/types";
import type {IBeaconChain} from "../../chain/interface.ts";
import type {BlobsBundle} from "../../execution/engine.ts";
import type {NetworkIdentity} from "../../network/identity.ts";
import type {NetworkContext, OutgoingGossip} from "../../network/networkContext.ts";
import type {OperationPools} from "../../pools/index.ts";
import {ApiError} from "../errors.ts";

/** What the node itself (not the chain) answers for: identity, settings, sync state. */
export interface NodeContext {
  /** `<name>/<version>-<commit>/<platform>` */
  version: string;
  /** the graffiti used when a block request names none (32 bytes) */
  graffiti(): Uint8Array;
  /** sets (and keeps across restarts) the graffiti */
  setGraffiti(value: Uint8Array): Promise<void>;
  /** the node's peer id, ENR and p2p metadata */
  identity: NetworkIdentity;
  setProposerFeeRecipient(validatorIndex: number, feeRecipient: Uint8Array): void;
  /** keeps a verified builder registration (there is no builder: nothing else reads them) */
  setValidatorRegistration(registration: bellatrix.ValidatorRegistrationV1): void;
  /** Whether the node is catching up with the network; never when absent (a dev chain that makes its own blocks). */
  isSyncing?(): boolean;
  /** Whether the execution engine is unreachable; never when absent. */
  isElOffline?(): boolean;
}

/** With `--builder`: the external block builder (src/builder/service.ts) as the API uses it. */
export interface BuilderContext {
  /** keeps a verified registration and sends it to the relay */
  register(signed: bellatrix.SignedValidatorRegistrationV1): void;
  /** reveals a blinded block's payload through the relay, or has the relay publish it ("published", fulu on); throws UnblindError */
  unblind(fork: ForkName, signed: SignedBlindedBeaconBlock): Promise<{payload: ExecutionPayload; blobsBundle: BlobsBundle | null} | "published">;
}

/** Everything the API handlers see. */
export interface ApiContext {
  chain: IBeaconChain;
  pools: OperationPools;
  node: NodeContext;
  /** with `--builder` */
  builder?: BuilderContext;
  /** absent when the node has no network (in-process tests) */
  network?: NetworkContext;
}

/** Hands an accepted object to the network, when there is one. */
export function broadcast(ctx: ApiContext, message: OutgoingGossip): void {
  ctx.network?.publish(message);
}

export function isNodeSyncing(ctx: ApiContext): boolean {
  return ctx.node.isSyncing?.() ?? false;
}

/** The head slot, how far the wall clock is ahead of it, and whether the node is syncing. */
export function syncState(ctx: ApiContext): {headSlot: number; syncDistance: number; isSyncing: boolean} {
  const headSlot = ctx.chain.getHead().slot;
  return {headSlot, syncDistance: Math.max(0, ctx.chain.currentSlot() - headSlot), isSyncing: isNodeSyncing(ctx)};
}

/** How far behind the clock a syncing node's head may be while it still serves its validators: one epoch, as Lodestar. */
export const SYNC_TOLERANCE_SLOTS = SLOTS_PER_EPOCH;

/**
 * The validator endpoints answer 503 while the node is syncing from a head more than an epoch
 * behind the clock: their answers would be stale. A node syncing another branch from a head that
 * is current (after a network split heals, its half's branch may lose to the other's) keeps
 * serving: its duties and attestation data follow its fork choice as the other branch arrives,
 * and refusing them would stall the whole half's validators while it syncs.
 */
export function assertNotSyncing(ctx: ApiContext): void {
  if (!isNodeSyncing(ctx)) return;
  const {syncDistance} = syncState(ctx);
  if (syncDistance > SYNC_TOLERANCE_SLOTS) throw new ApiError(503, `Beacon node is currently syncing and not serving request on that endpoint (head ${syncDistance} slots behind)`);
}

/** Validators must not build on a block whose payload the engine has not validated (sync/optimistic.md): 503 until it has. */
export function assertHeadNotOptimistic(ctx: ApiContext): void {
  if (ctx.chain.isHeadOptimistic()) throw new ApiError(503, "Beacon node's head is optimistic: the execution engine has not validated its payload yet");
}

import {EventEmitter} from "node:events";
import {AttestationPool} from "./attestationPool.ts";
import {OpPool} from "./opPool.ts";
import {SyncCommitteePools} from "./syncCommitteePools.ts";
import type {PoolDeps, PoolEmitter, PoolEvents} from "./types.ts";

export {AttestationPool} from "./attestationPool.ts";
export {OpPool, type BlockOperations} from "./opPool.ts";
export {SyncCommitteePools} from "./syncCommitteePools.ts";
export {POOL_EVENTS, PoolError, type PoolDeps, type PoolEmitter, type PoolEvents} from "./types.ts";

/**
 * The node's operation pools. Every submission is validated (signature included) before it is
 * kept; `emitter` then emits it under its Beacon API event topic.
 */
export class OperationPools {
  readonly emitter: PoolEmitter = new EventEmitter<PoolEvents>();
  readonly attestations: AttestationPool;
  readonly opPool: OpPool;
  readonly syncCommittee: SyncCommitteePools;

  constructor(deps: PoolDeps) {
    this.attestations = new AttestationPool(deps, this.emitter);
    this.opPool = new OpPool(deps, this.emitter);
    this.syncCommittee = new SyncCommitteePools(deps, this.emitter);
  }

  /** Drops the attestations and sync committee signatures that are too old at `currentSlot`. */
  prune(currentSlot: number): void {
    this.attestations.prune(currentSlot);
    this.syncCommittee.prune(currentSlot);
  }
}

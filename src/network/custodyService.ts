import type {BeaconConfig} from "@lodestar/config";
import type {IBeaconChain} from "../chain/interface.ts";
import {getLogger} from "../log.ts";
import {ourCustodyGroupCount, samplingColumns, validatorsCustodyRequirement} from "./custody.ts";

const log = getLogger("network");

/** Where the highest custody group count is kept across restarts (fulu validator.md: it SHOULD persist). */
export interface CustodyStore {
  get(): Promise<number | null>;
  put(count: number): Promise<void>;
}

export interface CustodyDeps {
  config: BeaconConfig;
  chain: Pick<IBeaconChain, "getStateByBlockRoot" | "getFinalizedCheckpoint" | "getHeadState">;
  /** the node id as a number (it picks the custody groups) */
  nodeId: bigint;
  store: CustodyStore;
  /** the count and the columns it samples changed: advertise the count, sample and join the columns' subnets */
  apply(count: number, columns: number[]): void;
}

/**
 * Data column custody (fulu): a supernode keeps every custody group, a semi-supernode half,
 * others the spec's minimum, raised with the effective balance of the validators attached
 * (those that post committee subscriptions). Custody only grows: peers may rely on what was
 * advertised.
 */
export class CustodyService {
  private count = 0;
  private readonly attached = new Set<number>();
  private readonly deps: CustodyDeps;

  constructor(deps: CustodyDeps) {
    this.deps = deps;
  }

  /** The starting count: the options' (`--subscribe-all-subnets`, `--semi-supernode`), or the stored one when higher. */
  async load(opts: {subscribeAllSubnets: boolean; semiSupernode: boolean}): Promise<void> {
    this.set(Math.max(ourCustodyGroupCount(this.deps.config, opts.subscribeAllSubnets, opts.semiSupernode), (await this.deps.store.get()) ?? 0));
  }

  groupCount(): number {
    return this.count;
  }

  /** Validators that posted committee subscriptions: their balances may raise the count. */
  attachValidators(indices: number[]): void {
    const before = this.attached.size;
    for (const index of indices) this.attached.add(index);
    if (this.attached.size > before) this.updateForValidators();
  }

  /** At each epoch: effective balances move at epoch boundaries. */
  onEpoch(): void {
    this.updateForValidators();
  }

  private set(count: number): void {
    if (count <= this.count) return;
    const raised = this.count > 0;
    this.count = count;
    if (raised) void this.deps.store.put(count).catch((e: Error) => log.warn({err: e.message}, "could not store the custody group count"));
    const columns = samplingColumns(this.deps.config, this.deps.nodeId, count);
    this.deps.apply(count, columns);
    if (count > this.deps.config.CUSTODY_REQUIREMENT) log.info({custodyGroupCount: count, columns: columns.length}, "data column custody set");
  }

  private updateForValidators(): void {
    if (this.attached.size === 0) return;
    const {chain} = this.deps;
    // the spec reads the balances in the latest finalized state
    void chain
      .getStateByBlockRoot(chain.getFinalizedCheckpoint().root)
      .then((state) => {
        state ??= chain.getHeadState();
        const known = [...this.attached].filter((i) => i < state.validators.length);
        this.set(validatorsCustodyRequirement(this.deps.config, known.map((i) => state.validators.getReadonly(i).effectiveBalance)));
      })
      .catch((e: Error) => log.warn({err: e.message}, "could not compute the validators' custody requirement"));
  }
}

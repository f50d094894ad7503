import type {LightClientBootstrap, LightClientFinalityUpdate, LightClientOptimisticUpdate, LightClientUpdate, Root} from "@lodestar/types";
import {toRootHex} from "@lodestar/utils";
import type {Forked, LightClientReader} from "../../../src/chain/lightClient/server.ts";

/** The light-client server's reader over data a test sets: bootstraps by root, updates by period. */
export class TestLightClient implements LightClientReader {
  readonly bootstraps = new Map<string, Forked<LightClientBootstrap>>();
  readonly updates = new Map<number, Forked<LightClientUpdate>>();
  finality: Forked<LightClientFinalityUpdate> | null = null;
  optimistic: Forked<LightClientOptimisticUpdate> | null = null;
  /** the (startPeriod, count) of each getUpdates call */
  readonly rangeCalls: Array<[number, number]> = [];

  async getBootstrap(blockRoot: Root) {
    return this.bootstraps.get(toRootHex(blockRoot)) ?? null;
  }
  async getUpdates(startPeriod: number, count: number) {
    this.rangeCalls.push([startPeriod, count]);
    const periods = [...this.updates.keys()].filter((p) => p >= startPeriod && p < startPeriod + count).sort((a, b) => a - b);
    return periods.map((p) => this.updates.get(p)!);
  }
  getFinalityUpdate() {
    return this.finality;
  }
  getOptimisticUpdate() {
    return this.optimistic;
  }
}

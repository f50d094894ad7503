import {AsyncLocalStorage} from "node:async_hooks";
import type {BeaconConfig} from "@lodestar/config";
import {byteArrayEquals, toHex} from "@lodestar/utils";
import {ApiClientError, type ApiClient} from "../api/client.ts";
import {createValidatorBeaconApi} from "../api/validatorApi.ts";
import type {TopicLogger} from "../log.ts";
import type {BeaconNodeFailure, BeaconNodeMetrics} from "../metrics/validatorMetrics.ts";
import type {ValidatorBeaconApi} from "./beaconApi.ts";
import type {SlotClock} from "./clock.ts";
import {errorMessage} from "./context.ts";
import {RouteFallbacks} from "./routeFallback.ts";

/**
 * Several beacon nodes seen as one Beacon API, in the order the user gave them.
 *
 * Reads (duties, block and attestation data, aggregates) go to the first node that is healthy
 * (synced: not syncing, head not optimistic, execution client online, on the chain the client
 * signs for); when it does not answer (connection refused or dropped, or no answer within a
 * quarter of a slot while another node could answer) the same request goes to the next one, in
 * the same slot. Publications (blocks, attestations, aggregates, sync committee messages and
 * contributions, subnet subscriptions, fee recipients, builder registrations) go to every
 * synced node at once and are done on the first success. An event stream (head events) is
 * opened on the first node in that order.
 *
 * Health is checked at start and then in the background three quarters into each slot
 * (`/eth/v1/node/syncing`, within a slot), never on a duty's path: a request only reads the last
 * state known. A node whose connection is refused or dropped is set aside at once; one that is
 * only slow (a request past its quarter slot) is set aside when a check or a request with no
 * other node to go to times out too. It comes back when a check or a request finds it
 * answering. Each change of a node's state is logged once, not each failed request.
 */

/** The abort signal of the request attempt under way; each node's HTTP transport reads it (httpTransport's `signal`). */
const attemptSignal = new AsyncLocalStorage<AbortSignal>();

/** For httpTransport: the signal of the attempt this request belongs to, if any. */
export function currentAttemptSignal(): AbortSignal | undefined {
  return attemptSignal.getStore();
}

export interface BeaconNodeEndpoint {
  /** how logs and metrics name the node: its URL without credentials */
  name: string;
  /** the route-table client of the node */
  client: ApiClient;
}

const READS = [
  "getGenesis", "getSpec", "getForkSchedule", "getValidators", "getProposerDuties", "getAttesterDuties", "getSyncCommitteeDuties",
  "produceBlock", "produceAttestationData", "getAggregatedAttestation", "getBlockRoot", "produceSyncCommitteeContribution", "getLiveness",
] as const satisfies readonly (keyof ValidatorBeaconApi)[];
const PUBLICATIONS = [
  "publishBlock", "publishBlindedBlock", "registerValidator", "submitAttestations", "publishAggregateAndProofs", "prepareBeaconCommitteeSubnet",
  "submitSyncCommitteeMessages", "publishContributionAndProofs", "prepareBeaconProposer",
] as const satisfies readonly (keyof ValidatorBeaconApi)[];
/** event streams: opened on the first node in order, without a time limit */
const STREAMS = ["headEvents"] as const satisfies readonly (keyof ValidatorBeaconApi)[];
/** a method of the API in no list fails to compile here */
const everyMethodListed: [Exclude<keyof ValidatorBeaconApi, (typeof READS)[number] | (typeof PUBLICATIONS)[number] | (typeof STREAMS)[number]>] extends [never] ? true : never = true;
void everyMethodListed;

/** Before the chain's slot length is known (start-up): how long an attempt may take. */
const STARTUP_TIMEOUT_MS = {short: 5_000, long: 30_000};
/** Three quarters into each slot: the next slot's order is known before its block proposal. */
const CHECK_AT_SLOT_FRACTION = 3 / 4;

type Call<T> = (api: ValidatorBeaconApi, client: ApiClient) => Promise<T>;

/** An attempt's deadline: a signal aborted `ms` from now (tests fire it by hand). */
export type TimeoutSignal = (ms: number) => AbortSignal;

class NodeState {
  readonly name: string;
  readonly client: ApiClient;
  api: ValidatorBeaconApi;
  /** null until first contacted */
  reachable: boolean | null = null;
  /** as its last check said; null before the first */
  synced: boolean | null = null;
  /** on the client's chain (genesis validators root); null until checked */
  compatible: boolean | null = null;
  checking = false;

  constructor(endpoint: BeaconNodeEndpoint) {
    this.name = endpoint.name;
    this.client = endpoint.client;
    this.api = createValidatorBeaconApi(endpoint.client);
  }

  /** 0 synced, 1 not known yet, 2 answering but not synced, 3 not answering */
  rank(): number {
    if (this.reachable === false) return 3;
    return this.synced === true ? 0 : this.synced === null ? 1 : 2;
  }
}

export class BeaconNodes {
  /** The nodes as one Beacon API: reads to the first node that answers, publications to all healthy nodes. */
  readonly api: ValidatorBeaconApi;
  private readonly nodes: NodeState[];
  private readonly log: TopicLogger;
  private readonly metrics: BeaconNodeMetrics | undefined;
  private timeouts = STARTUP_TIMEOUT_MS;
  private genesisValidatorsRoot: Uint8Array | null = null;
  private primary: string | null = null;
  private readonly recoveredListeners: (() => void)[] = [];
  private readonly timeoutSignal: TimeoutSignal;

  constructor(endpoints: BeaconNodeEndpoint[], log: TopicLogger, metrics?: BeaconNodeMetrics, timeoutSignal: TimeoutSignal = (ms) => AbortSignal.timeout(ms)) {
    if (endpoints.length === 0) throw new Error("no beacon node given");
    this.nodes = endpoints.map((e) => new NodeState(e));
    this.log = log;
    this.metrics = metrics;
    this.timeoutSignal = timeoutSignal;
    const api: Record<string, unknown> = {};
    for (const method of READS) api[method] = (...args: unknown[]) => this.firstSuccess((node) => (node[method] as (...a: unknown[]) => Promise<unknown>)(...args));
    for (const method of PUBLICATIONS) api[method] = (...args: unknown[]) => this.publish((node) => (node[method] as (...a: unknown[]) => Promise<unknown>)(...args));
    for (const method of STREAMS) api[method] = (...args: unknown[]) => this.stream((node) => (node[method] as (...a: unknown[]) => Promise<unknown>)(...args));
    this.api = api as unknown as ValidatorBeaconApi;
  }

  /**
   * Once the chain is known: each node falls back to older routes on its own (routeFallback.ts),
   * attempts time out by the slot length, nodes of another chain are set aside, the nodes are
   * checked now and then each slot on `clock`.
   */
  async start(config: BeaconConfig, clock: Pick<SlotClock, "currentSlot" | "runAt">): Promise<void> {
    for (const node of this.nodes) node.api = new RouteFallbacks(node.client, this.log.child({node: node.name})).wrap(node.api, config);
    const slotMs = config.SLOT_DURATION_MS;
    this.timeouts = {short: slotMs / 4, long: Math.max(2 * slotMs, 12_000)};
    this.genesisValidatorsRoot = config.genesisValidatorsRoot;
    await this.check(slotMs);
    const schedule = (slot: number): void =>
      clock.runAt(slot, slotMs * CHECK_AT_SLOT_FRACTION, () => {
        schedule(Math.max(slot + 1, clock.currentSlot() + 1));
        void this.check(slotMs);
      });
    schedule(Math.max(0, clock.currentSlot()));
  }

  /** An event stream from the first node in order (the stream's reader opens it again, on whichever node is first then, when it ends). */
  private stream<T>(open: (api: ValidatorBeaconApi) => Promise<T>): Promise<T> {
    const node = this.candidates()[0];
    return node ? open(node.api) : Promise.reject(new Error("no beacon node on the client's chain"));
  }

  /** Called when a node that was unusable becomes usable again (it may lack subscriptions and fee recipients given meanwhile). */
  onRecovered(listener: () => void): void {
    this.recoveredListeners.push(listener);
  }

  /** Checks every node (a node whose last check is still running is skipped), each within `timeoutMs`. */
  async check(timeoutMs: number): Promise<void> {
    await Promise.all(this.nodes.map((node) => this.checkNode(node, timeoutMs)));
  }

  /** The nodes in the order requests try them: synced first, then not checked yet, then not synced, then not answering; the given order within each. */
  order(): string[] {
    return this.candidates().map((n) => n.name);
  }

  private candidates(): NodeState[] {
    return this.nodes.filter((n) => n.compatible !== false).sort((a, b) => a.rank() - b.rank());
  }

  private async checkNode(node: NodeState, timeoutMs: number): Promise<void> {
    if (node.checking) return;
    node.checking = true;
    try {
      const {data} = await this.attempt(node, timeoutMs, true, (_, client) => client.request("getSyncingStatus", {}));
      if (node.compatible === null && this.genesisValidatorsRoot) {
        const genesis = await this.attempt(node, timeoutMs, true, (_, client) => client.request("getGenesis", {}));
        node.compatible = byteArrayEquals(genesis.data.genesisValidatorsRoot, this.genesisValidatorsRoot);
        if (!node.compatible) {
          this.log.error(
            {node: node.name, genesisValidatorsRoot: toHex(genesis.data.genesisValidatorsRoot), expected: toHex(this.genesisValidatorsRoot)},
            "Beacon node is on another chain: it is not used"
          );
        }
      }
      const synced = !data.isSyncing && !data.isOptimistic && !data.elOffline;
      const before = node.synced;
      node.synced = synced;
      this.metrics?.setHealthy(node.name, synced && node.compatible !== false);
      if (!synced && before !== false) {
        this.log.warn({node: node.name, isSyncing: data.isSyncing, isOptimistic: data.isOptimistic, elOffline: data.elOffline}, "Beacon node not synced: others go first");
      } else if (synced && before === false) {
        this.log.info({node: node.name}, "Beacon node synced again");
        this.recovered();
      }
    } catch {
      // counted, and a node not answering set aside, by the attempt
      this.metrics?.setHealthy(node.name, false);
    } finally {
      node.checking = false;
      this.updatePrimary();
    }
  }

  /** One request to one node within `timeoutMs`, counted, its failure classified; `timeoutSetsAside`: no answer in that time sets the node aside. */
  private async attempt<T>(node: NodeState, timeoutMs: number, timeoutSetsAside: boolean, call: Call<T>): Promise<T> {
    const signal = this.timeoutSignal(timeoutMs);
    this.metrics?.request(node.name);
    try {
      const result = await attemptSignal.run(signal, () => call(node.api, node.client));
      this.answered(node);
      return result;
    } catch (err) {
      const reason = failureOf(err, signal);
      this.metrics?.failure(node.name, reason);
      if (reason === "unreachable" || (reason === "timeout" && timeoutSetsAside)) this.notAnswering(node, reason, err);
      else if (reason !== "timeout") this.answered(node);
      throw err;
    }
  }

  /** Tries the nodes in order until one answers; the error thrown is the first node's answer, or the first failure if none answered. */
  private async firstSuccess<T>(call: Call<T>, nodes = this.candidates()): Promise<T> {
    if (nodes.length === 0) throw new Error("no beacon node of this chain is usable");
    const errors: unknown[] = [];
    for (const [i, node] of nodes.entries()) {
      // a short timeout while a node that answers could take over; the last one gets its time
      const alternative = nodes.slice(i + 1).some((n) => n.reachable !== false);
      try {
        return await this.attempt(node, alternative ? this.timeouts.short : this.timeouts.long, !alternative, call);
      } catch (err) {
        errors.push(err);
      }
    }
    throw preferredError(errors);
  }

  /**
   * To every synced node at once (or, none being synced, as a read); done on the first success,
   * else on to the other nodes in order. A slow node delays nothing here: each has its time.
   */
  private async publish<T>(call: Call<T>): Promise<T> {
    const candidates = this.candidates();
    const synced = candidates.filter((n) => n.rank() === 0);
    if (synced.length <= 1) return this.firstSuccess(call, candidates);
    try {
      return await Promise.any(synced.map((node) => this.attempt(node, this.timeouts.long, true, call)));
    } catch (err) {
      const rest = candidates.filter((n) => !synced.includes(n));
      const errors = (err as AggregateError).errors;
      if (rest.length === 0) throw preferredError(errors);
      return this.firstSuccess(call, rest).catch(() => {
        throw preferredError(errors);
      });
    }
  }

  private answered(node: NodeState): void {
    if (node.reachable === true) return;
    const wasDown = node.reachable === false;
    node.reachable = true;
    if (wasDown) {
      this.log.info({node: node.name}, "Beacon node answers again");
      this.recovered();
    }
    this.updatePrimary();
  }

  private notAnswering(node: NodeState, reason: BeaconNodeFailure, err: unknown): void {
    if (node.reachable === false) return;
    node.reachable = false;
    this.metrics?.setHealthy(node.name, false);
    this.log.warn({node: node.name, reason, error: errorMessage(err)}, "Beacon node not answering: its requests go to the next node");
    this.updatePrimary();
  }

  private updatePrimary(): void {
    const first = this.candidates()[0]?.name ?? null;
    if (first === this.primary) return;
    this.log.info({node: first, previous: this.primary, order: this.order()}, "Beacon node for duties");
    this.primary = first;
    this.metrics?.setPrimary(first);
  }

  private recovered(): void {
    for (const listener of this.recoveredListeners) listener();
  }
}

/** An error answer (the node's own word) before a failure to reach a node; else the first failure. */
function preferredError(errors: unknown[]): unknown {
  return errors.find((e) => e instanceof ApiClientError) ?? errors[0];
}

/** Why an attempt failed: fetch rejects with a TypeError when the connection is refused or dropped (by name: it may come from another realm). */
function failureOf(err: unknown, signal: AbortSignal): BeaconNodeFailure {
  if (err instanceof ApiClientError) return "http_error";
  if (signal.aborted) return "timeout";
  if ((err as {name?: unknown} | null)?.name === "TypeError") return "unreachable";
  return "bad_answer";
}

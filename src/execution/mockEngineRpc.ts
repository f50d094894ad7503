import type {ForkName} from "@lodestar/params";
import type {ExecutionPayload} from "@lodestar/types";
import type {BuiltPayload, ParentPayload, PayloadAttributes, PayloadStatus, PayloadValidity} from "./engine.ts";
import {
  EngineJsonError,
  data,
  parseData,
  parseObject,
  parsePayload,
  parsePayloadAttributes,
  parseQuantity,
  quantity,
  serializeBlobsBundle,
  serializeExecutionRequests,
  serializePayload,
} from "./engineJson.ts";
import {GENESIS_EXECUTION_BLOCK_HASH, MockExecutionEngine} from "./mockEngine.ts";
import {CONSENSUS_CAPABILITIES} from "./engineMethods.ts";

/**
 * The dev chain's mock engine behind the Engine API's methods, as `beacon-gateway mock-engine`
 * serves them over HTTP. Payloads are judged by the in-process mock; this layer adds what the
 * wire needs (payload ids, known block hashes) and, for tests, verdicts an operator imposes on
 * a payload by block number or hash (`mock_setPayloadStatus`): INVALID, INVALID_BLOCK_HASH,
 * SYNCING or ACCEPTED, given by newPayload and by forkchoiceUpdated on that block or its descendants.
 * Like the in-process mock it judges payloads by their own content, so it can be restarted under
 * a running node.
 */

/** A JSON-RPC error the server answers with (engine-api common.md "Errors"). */
export class RpcError extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.code = code;
  }
}

export const INVALID_PARAMS = -32602;
export const METHOD_NOT_FOUND = -32601;
const UNKNOWN_PAYLOAD = -38001;

interface KnownBlock {
  parentHash: string;
  blockNumber: number;
  gasLimit: number;
}

interface PendingPayload {
  parent: ParentPayload;
  attributes: PayloadAttributes;
  built: Map<ForkName, Promise<BuiltPayload>>;
}

type ImposedStatus = Exclude<PayloadValidity, "VALID">;
const IMPOSABLE: readonly ImposedStatus[] = ["INVALID", "INVALID_BLOCK_HASH", "SYNCING", "ACCEPTED"];

/** The payload fork each method version implies; V2 before capella has no withdrawals; V3+ payloads are one type through fulu. */
function payloadFork(version: number, hasWithdrawals: boolean): ForkName {
  if (version === 1) return "bellatrix" as ForkName;
  if (version === 2) return (hasWithdrawals ? "capella" : "bellatrix") as ForkName;
  return (version === 3 ? "deneb" : "electra") as ForkName;
}

const GET_PAYLOAD_FORK: Record<number, ForkName> = {
  1: "bellatrix" as ForkName,
  2: "capella" as ForkName,
  3: "deneb" as ForkName,
  4: "electra" as ForkName,
  5: "fulu" as ForkName,
};

export const MOCK_ENGINE_METHODS: readonly string[] = CONSENSUS_CAPABILITIES;

export class MockEngineRpc {
  private readonly engine: MockExecutionEngine;
  private readonly known = new Map<string, KnownBlock>();
  private readonly pending = new Map<string, PendingPayload>();
  /** imposed verdicts, keyed `hash:0x…`, or `number:N` until the first payload of that number is seen */
  private readonly imposed = new Map<string, ImposedStatus>();
  /** block number → the payload a verdict by number was bound to */
  private readonly boundByNumber = new Map<number, string>();
  private nextPayloadId = 1n;
  /** forkchoiceUpdatedV3 serves deneb, electra and fulu: building starts for the fork of the last getPayload */
  private lastFork = "fulu" as ForkName;

  constructor(engine: MockExecutionEngine = new MockExecutionEngine()) {
    this.engine = engine;
    this.known.set(data(GENESIS_EXECUTION_BLOCK_HASH), {parentHash: data(new Uint8Array(32)), blockNumber: 0, gasLimit: 0});
  }

  /** Answers one call; throws RpcError for the JSON-RPC error to send. */
  async handle(method: string, params: unknown[]): Promise<unknown> {
    try {
      const version = Number(/V(\d)$/.exec(method)?.[1] ?? 0);
      if (method === "engine_exchangeCapabilities") return MOCK_ENGINE_METHODS;
      if (method === "mock_setPayloadStatus") return this.setPayloadStatus(params[0]);
      if (method === "mock_getImposedStatuses") return this.imposedStatuses();
      if (!MOCK_ENGINE_METHODS.includes(method)) throw new RpcError(METHOD_NOT_FOUND, `Method not found: ${method}`);
      if (method.startsWith("engine_newPayload")) return await this.newPayload(version, params);
      if (method.startsWith("engine_forkchoiceUpdated")) return this.forkchoiceUpdated(method, params);
      if (method.startsWith("engine_getPayload")) return await this.getPayload(version, params[0]);
      return await this.getBlobs(version, params[0]);
    } catch (e) {
      if (e instanceof EngineJsonError) throw new RpcError(INVALID_PARAMS, `Invalid params: ${e.message}`);
      throw e;
    }
  }

  /** Admin: `{blockNumber?: QUANTITY, blockHash?: DATA, status}`; the status is given for that payload from now on. */
  private setPayloadStatus(param: unknown): boolean {
    const o = parseObject(param, "params[0]");
    const status = o.status as ImposedStatus;
    if (!IMPOSABLE.includes(status)) throw new RpcError(INVALID_PARAMS, `Invalid params: status must be one of ${IMPOSABLE.join(", ")}`);
    if (o.blockHash !== undefined) this.imposed.set(`hash:${data(parseData(o.blockHash, "blockHash", 32))}`, status);
    else if (o.blockNumber !== undefined) {
      const blockNumber = Number(parseQuantity(o.blockNumber, "blockNumber"));
      const bound = this.boundByNumber.get(blockNumber);
      this.imposed.set(bound ? `hash:${bound}` : `number:${blockNumber}`, status);
    } else throw new RpcError(INVALID_PARAMS, "Invalid params: give blockHash or blockNumber");
    return true;
  }

  /** Admin: every verdict bound to a payload, `[{blockHash, blockNumber, status}]`. */
  private imposedStatuses(): unknown {
    return [...this.boundByNumber.entries()].map(([blockNumber, hash]) => ({blockHash: hash, blockNumber: quantity(blockNumber), status: this.imposed.get(`hash:${hash}`)}));
  }

  /**
   * Records a payload; a verdict waiting for its block number now holds for this payload alone
   * (the next payload of that number, built on the same parent after this one was refused, is judged on its own).
   */
  private remember(payload: ExecutionPayload): void {
    const hash = data(payload.blockHash);
    if (this.known.has(hash)) return;
    this.known.set(hash, {parentHash: data(payload.parentHash), blockNumber: payload.blockNumber, gasLimit: payload.gasLimit});
    const waiting = this.imposed.get(`number:${payload.blockNumber}`);
    if (waiting) {
      this.imposed.delete(`number:${payload.blockNumber}`);
      this.imposed.set(`hash:${hash}`, waiting);
      this.boundByNumber.set(payload.blockNumber, hash);
    }
  }

  private imposedOn(hash: string): ImposedStatus | undefined {
    return this.imposed.get(`hash:${hash}`);
  }

  private async newPayload(version: number, params: unknown[]): Promise<unknown> {
    const json = parseObject(params[0], "executionPayload");
    const fork = payloadFork(version, json.withdrawals !== undefined && json.withdrawals !== null);
    const payload = parsePayload(fork, json);
    if (version >= 3) {
      if (!Array.isArray(params[1])) throw new RpcError(INVALID_PARAMS, "Invalid params: expectedBlobVersionedHashes must be an array");
      parseData(params[2], "parentBeaconBlockRoot", 32);
    }
    if (version >= 4 && !Array.isArray(params[3])) throw new RpcError(INVALID_PARAMS, "Invalid params: executionRequests must be an array");
    const hash = data(payload.blockHash);
    this.remember(payload);
    const imposed = this.statusOf(hash);
    if (imposed) return statusJson(imposed);
    return statusJson(await this.engine.notifyNewPayload(fork, payload));
  }

  /**
   * The imposed verdict that applies to `hash`: its own, or an INVALID one of an ancestor (a
   * descendant of an invalid block is invalid). INVALID carries the newest valid ancestor's hash.
   */
  private statusOf(hash: string): PayloadStatus | null {
    let firstImposed: ImposedStatus | null = null;
    let invalidFrom: string | null = null;
    for (let h: string | undefined = hash, block = this.known.get(hash); block !== undefined; h = block.parentHash, block = this.known.get(h)) {
      const imposed = this.imposedOn(h!);
      if (imposed && firstImposed === null) firstImposed = imposed;
      if (imposed === "INVALID" || imposed === "INVALID_BLOCK_HASH") invalidFrom = h!;
    }
    if (invalidFrom !== null) {
      const block = this.known.get(invalidFrom)!;
      const status = this.imposedOn(invalidFrom)!;
      // INVALID_BLOCK_HASH says nothing of ancestors (paris.md: latestValidHash null)
      if (invalidFrom === hash && status === "INVALID_BLOCK_HASH") return {status, latestValidHash: null};
      return {status: "INVALID", latestValidHash: parseData(block.parentHash, "parentHash")};
    }
    return firstImposed ? {status: firstImposed, latestValidHash: null} : null;
  }

  private forkchoiceUpdated(method: string, params: unknown[]): unknown {
    const state = parseObject(params[0], "forkchoiceState");
    const head = data(parseData(state.headBlockHash, "headBlockHash", 32));
    parseData(state.safeBlockHash, "safeBlockHash", 32);
    parseData(state.finalizedBlockHash, "finalizedBlockHash", 32);
    let block = this.known.get(head);
    if (!block) {
      // a head from before this process started (the mock engine was restarted; it keeps nothing):
      // taken on trust, as the in-process mock takes every parent, so the chain goes on. Its
      // block number is not known: payloads on it restart the numbering at 1.
      block = {parentHash: data(new Uint8Array(32)), blockNumber: 0, gasLimit: 0};
      this.known.set(head, block);
    }
    const imposed = this.statusOf(head);
    if (imposed) {
      const status = imposed.status === "ACCEPTED" ? "SYNCING" : imposed.status === "INVALID_BLOCK_HASH" ? "INVALID" : imposed.status;
      return {payloadStatus: statusJson({...imposed, status}), payloadId: null};
    }
    const valid = statusJson({status: "VALID", latestValidHash: parseData(head, "head")});
    if (params[1] === null || params[1] === undefined) return {payloadStatus: valid, payloadId: null};
    const attributes = parsePayloadAttributes(params[1]);
    const payloadId = data(Buffer.from(this.nextPayloadId.toString(16).padStart(16, "0"), "hex"));
    this.nextPayloadId++;
    const pending: PendingPayload = {parent: {blockHash: parseData(head, "head"), blockNumber: block.blockNumber, gasLimit: block.gasLimit}, attributes, built: new Map()};
    this.pending.set(payloadId, pending);
    // like a real engine, start building now so getPayload (1 s timeout) finds it ready
    const version = Number(/V(\d)$/.exec(method)?.[1] ?? 3);
    const fork = version === 3 ? this.lastFork : payloadFork(version, attributes.withdrawals !== undefined);
    setImmediate(() => void this.build(pending, fork).catch(() => undefined));
    // ids of payloads long fetched are forgotten
    for (const id of this.pending.keys()) if (this.pending.size > 64) this.pending.delete(id);
    return {payloadStatus: valid, payloadId};
  }

  private async getPayload(version: number, param: unknown): Promise<unknown> {
    const id = data(parseData(param, "payloadId", 8));
    const pending = this.pending.get(id);
    if (!pending) throw new RpcError(UNKNOWN_PAYLOAD, "Unknown payload");
    const fork = GET_PAYLOAD_FORK[version];
    if (version >= 3) this.lastFork = fork;
    const built = await this.build(pending, fork);
    if (version === 1) return serializePayload(built.payload);
    const result: Record<string, unknown> = {executionPayload: serializePayload(built.payload), blockValue: quantity(built.blockValue)};
    if (version >= 3) Object.assign(result, {blobsBundle: serializeBlobsBundle(built.blobsBundle), shouldOverrideBuilder: false});
    if (version >= 4) result.executionRequests = serializeExecutionRequests(built.executionRequests);
    return result;
  }

  /** The payload of `pending` for `fork`, built once; its block is remembered (its blobs go to the engine's pool). */
  private build(pending: PendingPayload, fork: ForkName): Promise<BuiltPayload> {
    let building = pending.built.get(fork);
    if (!building) {
      building = this.engine.buildPayload(fork, pending.parent, pending.attributes).then((built) => {
        this.remember(built.payload);
        return built;
      });
      pending.built.set(fork, building);
    }
    return building;
  }

  /** V1: each blob with its one proof, null where missing; V2: blobs with their cell proofs, or null if any is missing. */
  private async getBlobs(version: number, param: unknown): Promise<unknown> {
    if (!Array.isArray(param)) throw new RpcError(INVALID_PARAMS, "Invalid params: not an array of versioned hashes");
    if (param.length > 128) throw new RpcError(-38004, "Too large request");
    const hashes = param.map((h, i) => parseData(h, `versionedHashes[${i}]`, 32));
    const found = await this.engine.getBlobs(version === 1 ? "electra" : "fulu", hashes);
    if (version === 1) return found!.map((b) => (b ? {blob: data(b.blob), proof: data(b.proofs[0])} : null));
    return found === null ? null : found.map((b) => ({blob: data(b!.blob), proofs: b!.proofs.map(data)}));
  }
}

function statusJson(status: PayloadStatus): Record<string, unknown> {
  return {status: status.status, latestValidHash: status.latestValidHash ? data(status.latestValidHash) : null, validationError: status.validationError ?? null};
}

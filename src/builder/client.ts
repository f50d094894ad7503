import {ForkName} from "@lodestar/params";
import type {SignedBlindedBeaconBlock, SignedBuilderBid} from "@lodestar/types";
import {toPubkeyHex, toRootHex} from "@lodestar/utils";
import {
  type SignedValidatorRegistration,
  SignedValidatorRegistrations,
  type UnblindedPayload,
  builderTypes,
  isBuilderFork,
} from "./types.ts";

/**
 * A client of the builder API (builder-specs `builder-oapi.yaml`) for one relay or MEV-boost:
 * registerValidator, getHeader, submitBlindedBlock (v1 before fulu: the relay returns the
 * payload; v2 from fulu: 202, the relay publishes), status. It asks for SSZ answers and reads
 * JSON as well (the header request's `Accept` is Lighthouse's: SSZ preferred, JSON accepted);
 * a relay that answered the header in SSZ is sent blinded blocks in SSZ, as the spec's note on
 * `submitBlindedBlock` says, and JSON otherwise.
 */

const SSZ = "application/octet-stream";
const JSON_TYPE = "application/json";
const PREFER_SSZ = `${SSZ};q=1.0,${JSON_TYPE};q=0.9`;

/** builder-specs bellatrix/validator.md BUILDER_PROPOSAL_DELAY_TOLERANCE: a bid comes within 1 s or not at all (Lighthouse's default too). */
export const DEFAULT_HEADER_TIMEOUT_MS = 1000;
/** Registrations, blinded blocks and status: Lighthouse's default for the builder's other requests. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 15_000;

/** The relay answered with an error status, or something the spec does not allow. */
export class BuilderError extends Error {
  /** the HTTP status; null when no answer came (a failed connection, a timeout) */
  readonly status: number | null;
  readonly timedOut: boolean;
  constructor(message: string, status: number | null, timedOut = false) {
    super(message);
    this.name = "BuilderError";
    this.status = status;
    this.timedOut = timedOut;
  }
}

export interface BuilderClientOptions {
  /** the relay's base URL, e.g. http://127.0.0.1:18550 */
  url: string;
  headerTimeoutMs?: number;
  requestTimeoutMs?: number;
  /** tests inject these */
  fetch?: typeof fetch;
  nowMs?: () => number;
}

export interface BuilderBidResponse {
  version: ForkName;
  bid: SignedBuilderBid;
}

export class BuilderClient {
  readonly url: string;
  private readonly headerTimeoutMs: number;
  private readonly requestTimeoutMs: number;
  private readonly fetch: typeof fetch;
  private readonly nowMs: () => number;
  /** the relay answered a header request in SSZ: it takes SSZ blinded blocks */
  private sszSupported = false;

  constructor(opts: BuilderClientOptions) {
    this.url = opts.url.replace(/\/+$/, "");
    this.headerTimeoutMs = opts.headerTimeoutMs ?? DEFAULT_HEADER_TIMEOUT_MS;
    this.requestTimeoutMs = opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.fetch = opts.fetch ?? fetch;
    this.nowMs = opts.nowMs ?? Date.now;
  }

  /** `POST /eth/v1/builder/validators` (JSON, the content type every relay takes). */
  async registerValidators(registrations: SignedValidatorRegistration[]): Promise<void> {
    const body = JSON.stringify(SignedValidatorRegistrations.toJson(registrations));
    await this.request("POST", "/eth/v1/builder/validators", {body, headers: {"Content-Type": JSON_TYPE}}, this.requestTimeoutMs);
  }

  /**
   * `GET /eth/v1/builder/header/{slot}/{parent_hash}/{pubkey}`: the relay's bid, or null when it
   * has none (204). The request says when it was sent and how long the proposer waits
   * (`Date-Milliseconds`, `X-Timeout-Ms`).
   */
  async getHeader(slot: number, parentHash: Uint8Array, pubkey: Uint8Array): Promise<BuilderBidResponse | null> {
    const path = `/eth/v1/builder/header/${slot}/${toRootHex(parentHash)}/${toPubkeyHex(pubkey)}`;
    const headers = {Accept: PREFER_SSZ, "Date-Milliseconds": String(this.nowMs()), "X-Timeout-Ms": String(this.headerTimeoutMs)};
    const res = await this.request("GET", path, {headers}, this.headerTimeoutMs);
    if (res.status === 204) return null;
    if (res.status !== 200) throw new BuilderError(`getHeader: unexpected status ${res.status}`, res.status);
    const {version, data} = await readVersioned(res, "getHeader");
    if (res.ssz) this.sszSupported = true;
    const type = builderTypes(version).SignedBuilderBid;
    return {version, bid: decode(() => (res.ssz ? type.deserialize(data as Uint8Array) : type.fromJson(data)), "getHeader")};
  }

  /** `POST /eth/v1/builder/blinded_blocks` (before fulu): the relay reveals the payload (and its blobs bundle from deneb). */
  async submitBlindedBlock(fork: ForkName, signed: SignedBlindedBeaconBlock): Promise<UnblindedPayload> {
    const res = await this.request("POST", "/eth/v1/builder/blinded_blocks", this.blindedBlockRequest(fork, signed), this.requestTimeoutMs);
    if (res.status !== 200) throw new BuilderError(`submitBlindedBlock: unexpected status ${res.status}`, res.status);
    const {version, data} = await readVersioned(res, "submitBlindedBlock");
    if (version !== fork) throw new BuilderError(`submitBlindedBlock: the relay answered a ${version} payload for a ${fork} block`, res.status);
    const type = builderTypes(fork).PayloadResponse;
    return decode(() => (res.ssz ? type.deserialize(data as Uint8Array) : type.fromJson(data)), "submitBlindedBlock");
  }

  /** `POST /eth/v2/builder/blinded_blocks` (fulu on): 202, the relay publishes the full block and its blobs. */
  async submitBlindedBlockV2(fork: ForkName, signed: SignedBlindedBeaconBlock): Promise<void> {
    const res = await this.request("POST", "/eth/v2/builder/blinded_blocks", this.blindedBlockRequest(fork, signed), this.requestTimeoutMs);
    if (res.status !== 202) throw new BuilderError(`submitBlindedBlockV2: unexpected status ${res.status} (202 expected)`, res.status);
  }

  /** `GET /eth/v1/builder/status`: resolves when the relay says it is healthy (200). */
  async status(): Promise<void> {
    const res = await this.request("GET", "/eth/v1/builder/status", {}, this.headerTimeoutMs);
    if (res.status !== 200) throw new BuilderError(`status: unexpected status ${res.status}`, res.status);
  }

  private blindedBlockRequest(fork: ForkName, signed: SignedBlindedBeaconBlock): {body: string | Uint8Array; headers: Record<string, string>} {
    if (!isBuilderFork(fork)) throw new BuilderError(`No builder blocks at ${fork}`, null);
    const type = builderTypes(fork).SignedBlindedBeaconBlock;
    const headers: Record<string, string> = {"Eth-Consensus-Version": fork, Accept: this.sszSupported ? PREFER_SSZ : JSON_TYPE};
    if (this.sszSupported) return {body: type.serialize(signed), headers: {...headers, "Content-Type": SSZ}};
    return {body: JSON.stringify(type.toJson(signed)), headers: {...headers, "Content-Type": JSON_TYPE}};
  }

  private async request(
    method: "GET" | "POST",
    path: string,
    init: {body?: string | Uint8Array; headers?: Record<string, string>},
    timeoutMs: number
  ): Promise<RelayResponse> {
    const what = `${method} ${path.split("/").slice(0, 5).join("/")}`;
    let res: Response;
    try {
      res = await this.fetch(this.url + path, {method, body: init.body as RequestInit["body"], headers: init.headers, signal: AbortSignal.timeout(timeoutMs)});
    } catch (e) {
      const timedOut = (e as Error).name === "TimeoutError";
      throw new BuilderError(timedOut ? `${what}: no answer within ${timeoutMs} ms` : `${what}: ${(e as Error).message}`, null, timedOut);
    }
    if (res.status >= 400) {
      const text = await res.text().catch(() => "");
      throw new BuilderError(`${what}: relay error ${res.status}: ${relayMessage(text)}`, res.status);
    }
    const ssz = (res.headers.get("content-type") ?? "").startsWith(SSZ);
    return {status: res.status, ssz, res};
  }
}

interface RelayResponse {
  status: number;
  ssz: boolean;
  res: Response;
}

/** The `message` of the spec's error body, else the text itself (shortened). */
function relayMessage(text: string): string {
  try {
    const body = JSON.parse(text) as {message?: unknown};
    if (typeof body.message === "string") return body.message;
  } catch {
    // not JSON
  }
  return text.slice(0, 200) || "(no message)";
}

async function readVersioned(r: RelayResponse, what: string): Promise<{version: ForkName; data: unknown}> {
  if (r.ssz) {
    const version = r.res.headers.get("eth-consensus-version");
    if (!version || !isBuilderVersion(version)) throw new BuilderError(`${what}: SSZ answer without a builder fork in Eth-Consensus-Version (${version})`, r.status);
    return {version, data: new Uint8Array(await r.res.arrayBuffer())};
  }
  let body: {version?: unknown; data?: unknown};
  try {
    body = (await r.res.json()) as typeof body;
  } catch (e) {
    throw new BuilderError(`${what}: answer is not JSON: ${(e as Error).message}`, r.status);
  }
  if (typeof body?.version !== "string" || !isBuilderVersion(body.version) || body.data === undefined) {
    throw new BuilderError(`${what}: answer is not {version, data} of a builder fork`, r.status);
  }
  return {version: body.version, data: body.data};
}

function isBuilderVersion(s: string): s is ForkName {
  return Object.values(ForkName).includes(s as ForkName) && isBuilderFork(s as ForkName);
}

function decode<T>(read: () => T, what: string): T {
  try {
    return read();
  } catch (e) {
    throw new BuilderError(`${what}: malformed answer: ${(e as Error).message}`, 200);
  }
}

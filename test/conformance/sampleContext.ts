import {DOMAIN_BEACON_ATTESTER} from "@lodestar/params";
import {computeEpochAtSlot, computeSigningRoot, interopSecretKey} from "@lodestar/state-transition";
import {ssz} from "@lodestar/types";
import {toHex} from "@lodestar/utils";
import type {IBeaconChain} from "../../src/chain/interface.ts";

/**
 * What a conformance sample is: the requests to send to one route of a live node, each with the
 * status it must get, and the context the samples build them from (the live chain over HTTP, and
 * the in-process chain where a request needs a signature).
 */

export interface SampleRequest {
  /** what the request shows; named in failures */
  label: string;
  /** path parameters by their wire name (`state_id`); undefined entries are left out */
  params?: Record<string, string | number | undefined>;
  /** query values by wire name; arrays repeat the key */
  query?: Record<string, string | number | (string | number)[] | undefined>;
  headers?: Record<string, string | undefined>;
  /** a JSON body (serialized), or raw text with `rawBody` */
  body?: unknown;
  rawBody?: string;
  /** the status the node must answer with */
  status: number;
  /** a 400 from a batch submission: the body must list `failures` */
  failures?: boolean;
  /** an event stream: read this many events, then close */
  events?: number;
  /**
   * A known deviation from the spec, and why it is not fixed here: the answer must still show it
   * (the test fails once it is gone, so the note is removed with the deviation).
   */
  deviation?: string;
}

export type Sample = (ctx: SampleContext) => Promise<SampleRequest[]> | SampleRequest[];

/** A JSON body as the API returns it. */
export type Json = any;

export const ZERO_ROOT = "0x" + "00".repeat(32);
/** a root that names nothing on the chain */
export const UNKNOWN_ROOT = "0x" + "ab".repeat(32);
/** the largest uint64: a well-formed slot or index that names nothing (404, or no match) */
export const MAX_UINT64 = "18446744073709551615";
/** 2^64: does not parse as a uint64 (400) */
export const PAST_UINT64 = "18446744073709551616";
/** a well-formed signature that signs nothing: items carrying it fail validation */
export const BAD_SIGNATURE = "0x" + "99".repeat(96);
/** the BLS G2 point at infinity (`skip_randao_verification`) */
export const G2_INFINITY = "0xc0" + "00".repeat(95);
export const FEE_RECIPIENT = "0x" + "fe".repeat(20);

export interface SampleContext {
  baseUrl: string;
  chain: IBeaconChain;
  /** the body of a 200 GET (throws otherwise) */
  getBody(path: string): Promise<Json>;
  /** the data of a 200 GET (throws otherwise) */
  get(path: string): Promise<Json>;
  /** the data of a 200 POST with a JSON body (throws otherwise) */
  post(path: string, body: unknown): Promise<Json>;
  currentSlot(): number;
  currentEpoch(): number;
  /** an interop validator's public key, as the head state has it */
  pubkey(index: number): Promise<string>;
  /** waits for the next slot to start, then `fraction` of a slot more; returns that slot */
  nextSlotAt(fraction: number): Promise<number>;
  /** the head block: slot and root */
  head(): Promise<{slot: number; root: string}>;
  /** computes a value once per run (shared by several samples) */
  once<T>(key: string, make: () => Promise<T>): Promise<T>;
  /** a single attestation of the current slot, signed by its attester, as submitted to the pool (once per run) */
  submittedAttestation(): Promise<SubmittedAttestation>;
}

export interface SubmittedAttestation {
  slot: number;
  committeeIndex: number;
  dataRoot: string;
  /** the SingleAttestation JSON */
  json: Json;
}

async function bodyOf(res: Response, what: string): Promise<Json> {
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${what}: HTTP ${res.status} ${text}`);
  return JSON.parse(text);
}

export function createSampleContext(baseUrl: string, chain: IBeaconChain): SampleContext {
  const memo = new Map<string, Promise<unknown>>();
  const ctx: SampleContext = {
    baseUrl,
    chain,
    getBody: async (path) => bodyOf(await fetch(baseUrl + path), `GET ${path}`),
    get: async (path) => (await ctx.getBody(path)).data,
    post: async (path, body) =>
      (await bodyOf(await fetch(baseUrl + path, {method: "POST", headers: {"content-type": "application/json"}, body: JSON.stringify(body)}), `POST ${path}`)).data,
    currentSlot: () => chain.currentSlot(),
    currentEpoch: () => computeEpochAtSlot(chain.currentSlot()),
    pubkey: async (index) => (await ctx.get(`/eth/v1/beacon/states/head/validators/${index}`)).validator.pubkey,
    async nextSlotAt(fraction) {
      const slotMs = chain.config.SECONDS_PER_SLOT * 1000;
      const sinceGenesis = Date.now() - chain.genesisTime * 1000;
      const nextStart = (Math.floor(sinceGenesis / slotMs) + 1) * slotMs;
      await new Promise((resolve) => setTimeout(resolve, nextStart + fraction * slotMs - sinceGenesis));
      return chain.currentSlot();
    },
    async head() {
      const header = await ctx.get("/eth/v1/beacon/headers/head");
      return {slot: Number(header.header.message.slot), root: header.root};
    },
    once<T>(key: string, make: () => Promise<T>): Promise<T> {
      let value = memo.get(key);
      if (!value) memo.set(key, (value = make()));
      return value as Promise<T>;
    },
    submittedAttestation: () => ctx.once("attestation", () => signAttestation(ctx)),
  };
  return ctx;
}

/**
 * A real SingleAttestation: the first attester of the current slot signs the node's attestation
 * data with its interop key, as the validator client does. The node's own validator signs the
 * same data, so whichever arrives second is a duplicate the pool ignores.
 */
async function signAttestation(ctx: SampleContext): Promise<SubmittedAttestation> {
  const slot = await ctx.nextSlotAt(0.2);
  const epoch = computeEpochAtSlot(slot);
  const duties: Json[] = await ctx.post(`/eth/v1/validator/duties/attester/${epoch}`, Array.from({length: 64}, (_, i) => String(i)));
  const duty = duties.find((d) => Number(d.slot) === slot);
  if (!duty) throw new Error(`no attester at slot ${slot}`);
  const dataJson = await ctx.get(`/eth/v1/validator/attestation_data?slot=${slot}&committee_index=${duty.committee_index}`);
  const data = ssz.phase0.AttestationData.fromJson(dataJson);
  const domain = ctx.chain.config.getDomain(slot, DOMAIN_BEACON_ATTESTER);
  const signature = interopSecretKey(Number(duty.validator_index)).sign(computeSigningRoot(ssz.phase0.AttestationData, data, domain)).toBytes();
  const json = {committee_index: duty.committee_index, attester_index: duty.validator_index, data: dataJson, signature: toHex(signature)};
  return {slot, committeeIndex: Number(duty.committee_index), dataRoot: toHex(ssz.phase0.AttestationData.hashTreeRoot(data)), json};
}

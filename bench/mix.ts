// The request mix of `npm run bench:api` (bench/apiMix.ts): what many validator clients and a few
// explorers ask of a beacon node, at their real schedule, made from a seed so that every server
// of a run (and every run with the same seed) gets the same requests.
//
// A validator client holds a few of the chain's validators (1 to 16, drawn without repeats) and a
// clock skew of its own. Each slot it asks `node/syncing` (its health poll of the node, on a timer
// of its own phase); at each epoch's start its proposer duties, its attester duties for the next
// epoch (its own index set) and its validators' status by pubkey; and at a third of each slot where one of its validators
// attests, the attestation data of each committee they sit in (the chain's assignment: every
// client holding a validator asks for the same slot and committee). An explorer asks, at random
// moments of each slot, headers and blocks of recent slots, the head header, finality checkpoints
// and validators of recent states, and validators by random ids or by pubkey, never the same thing
// twice. The offered rate grows with the number of clients, never by asking one thing again.
import {prng} from "./seededRandom.ts";

export type Category = "duties" | "attestation_data" | "validators" | "blocks" | "states" | "node";
export const CATEGORIES: Category[] = ["duties", "attestation_data", "validators", "blocks", "states", "node"];

export interface MixChain {
  slotsPerEpoch: number;
  secondsPerSlot: number;
  /** committees per slot at this validator count */
  committeesPerSlot: number;
  /** the chain's validators' pubkeys (0x hex), by index */
  pubkeys: string[];
}

export interface MixRequest {
  /** when to send it, in ms from the start of `startSlot` */
  atMs: number;
  client: number;
  category: Category;
  method: "GET" | "POST";
  path: string;
  body?: string;
}

export interface MixOptions {
  seed: number;
  chain: MixChain;
  /** the first slot of the window (its start is time 0) */
  startSlot: number;
  slots: number;
  /** clients are added until the window holds this many requests a second (at least one client) */
  rate: number;
  /** one client in this many is an explorer, the others validator clients */
  explorerEvery?: number;
  /** each client's clock is late by up to this much (how far apart the same duty's requests land) */
  skewMs?: number;
}

/** A uint32 hash of a few integers (the chain's "shuffling" of the mix, and the clients' seeds). */
function hash(...xs: number[]): number {
  let h = 0x811c9dc5;
  for (const x of xs) h = Math.imul(h ^ (x >>> 0), 0x01000193) ^ (h >>> 15);
  return prng(h)() * 2 ** 32;
}

/** The slot (within its epoch) and committee where validator `v` attests in `epoch`. */
export function attesterDuty(seed: number, chain: MixChain, epoch: number, v: number): {slotInEpoch: number; committee: number} {
  const h = hash(seed, 0xa77e, epoch, v);
  return {slotInEpoch: h % chain.slotsPerEpoch, committee: Math.floor(h / chain.slotsPerEpoch) % chain.committeesPerSlot};
}

/** `n` distinct draws from [0, size). */
function distinct(random: () => number, n: number, size: number): number[] {
  const picked = new Set<number>();
  while (picked.size < Math.min(n, size)) picked.add(Math.floor(random() * size));
  return [...picked];
}

const json = (v: unknown): string => JSON.stringify(v);

/** One validator client's requests over the window. */
function validatorClient(o: MixOptions, client: number, random: () => number): MixRequest[] {
  const {chain, seed} = o;
  const slotMs = chain.secondsPerSlot * 1000;
  // most operators run one key or a few, some many
  const keys = random() < 0.4 ? 1 : 1 + Math.floor(random() ** 2 * 16);
  const indices = distinct(random, keys, chain.pubkeys.length).sort((a, b) => a - b);
  const skew = random() * (o.skewMs ?? 200);
  // its health poll runs on a timer of its own, once a slot at a phase of its own
  const pollPhase = random() * slotMs;
  const out: MixRequest[] = [];
  const at = (slot: number, fromStart: number): number => (slot - o.startSlot) * slotMs + fromStart + skew;
  for (let slot = o.startSlot; slot < o.startSlot + o.slots; slot++) {
    const epoch = Math.floor(slot / chain.slotsPerEpoch);
    out.push({atMs: (slot - o.startSlot) * slotMs + pollPhase, client, category: "node", method: "GET", path: "/eth/v1/node/syncing"});
    if (slot % chain.slotsPerEpoch === 0) {
      out.push({atMs: at(slot, random() * 500), client, category: "duties", method: "GET", path: `/eth/v1/validator/duties/proposer/${epoch}`});
      out.push({atMs: at(slot, random() * 500), client, category: "duties", method: "POST", path: `/eth/v1/validator/duties/attester/${epoch + 1}`, body: json(indices.map(String))});
      // by GET, which every server of the bench serves (Lodestar 1.5.1 has no POST form; clients fall back to this one)
      out.push({atMs: at(slot, 500 + random() * 500), client, category: "validators", method: "GET", path: `/eth/v1/beacon/states/head/validators?id=${indices.map((i) => chain.pubkeys[i]).join(",")}`});
    }
    const committees = new Set<number>();
    for (const v of indices) {
      const duty = attesterDuty(seed, chain, epoch, v);
      if (duty.slotInEpoch === slot % chain.slotsPerEpoch) committees.add(duty.committee);
    }
    for (const committee of [...committees].sort((a, b) => a - b)) {
      out.push({atMs: at(slot, slotMs / 3 + random() * 20), client, category: "attestation_data", method: "GET", path: `/eth/v1/validator/attestation_data?slot=${slot}&committee_index=${committee}`});
    }
  }
  return out;
}

/** One explorer's requests over the window: two a slot, each new to it (a few tries, then skipped). */
function explorer(o: MixOptions, client: number, random: () => number): MixRequest[] {
  const {chain} = o;
  const slotMs = chain.secondsPerSlot * 1000;
  const validators = chain.pubkeys.length;
  const asked = new Set<string>();
  const out: MixRequest[] = [];
  for (let slot = o.startSlot; slot < o.startSlot + o.slots; slot++) {
    // slots before this one: recent ones (the last two epochs), where explorers look
    const recent = (): number => Math.max(1, slot - 1 - Math.floor(random() * 2 * chain.slotsPerEpoch));
    const draws: (() => Omit<MixRequest, "atMs" | "client">)[] = [
      () => ({category: "blocks", method: "GET", path: `/eth/v1/beacon/headers/${recent()}`}),
      () => ({category: "blocks", method: "GET", path: `/eth/v2/beacon/blocks/${recent()}`}),
      // the head, polled: new each slot (the key of what was asked names the slot)
      () => ({category: "blocks", method: "GET", path: "/eth/v1/beacon/headers/head"}),
      () => ({category: "states", method: "GET", path: `/eth/v1/beacon/states/${Math.max(0, slot - 1 - Math.floor(random() * 4))}/finality_checkpoints`}),
      () => ({category: "states", method: "GET", path: `/eth/v1/beacon/states/${Math.max(0, slot - 1 - Math.floor(random() * 4))}/validators/${Math.floor(random() * validators)}`}),
      () => ({category: "validators", method: "GET", path: `/eth/v1/beacon/states/head/validators?id=${distinct(random, 1 + Math.floor(random() * 4), validators).join(",")}`}),
      () => ({category: "validators", method: "GET", path: `/eth/v1/beacon/states/head/validators/${chain.pubkeys[Math.floor(random() * validators)]}`}),
    ];
    for (let n = 0; n < 2; n++) {
      for (let tries = 0; tries < 4; tries++) {
        const request = draws[Math.floor(random() * draws.length)]();
        const key = request.path.endsWith("/head") ? `${request.path} ${slot}` : request.path;
        if (asked.has(key)) continue;
        asked.add(key);
        out.push({...request, atMs: (slot - o.startSlot) * slotMs + random() * slotMs, client});
        break;
      }
    }
  }
  return out;
}

/** The clients' requests in the order they are sent. */
export function mixSchedule(o: MixOptions): MixRequest[] {
  const windowS = o.slots * o.chain.secondsPerSlot;
  const explorerEvery = o.explorerEvery ?? 8;
  const all: MixRequest[] = [];
  for (let client = 0; client === 0 || all.length < o.rate * windowS; client++) {
    const random = prng(hash(o.seed, client));
    all.push(...(client % explorerEvery === explorerEvery - 1 ? explorer(o, client, random) : validatorClient(o, client, random)));
  }
  return all.filter((r) => r.atMs < windowS * 1000).sort((a, b) => a.atMs - b.atMs || a.client - b.client);
}

/** The key of a request: what makes two requests the same. */
export const requestKey = (r: Pick<MixRequest, "method" | "path" | "body">): string => `${r.method} ${r.path} ${r.body ?? ""}`;

import {describe, it, expect} from "@jest/globals";
import {createServer, type ServerResponse} from "node:http";
import type {AddressInfo} from "node:net";
import {type MixChain, type MixRequest, attesterDuty, mixSchedule, requestKey} from "../../../bench/mix.ts";
import {runOpenLoop, summarize, sustainedRate, unsuccessfulLine} from "../../../bench/openLoop.ts";

// the dev chain of bench:api: minimal preset, 64 validators, 2 committees a slot, 4 s slots
const chain: MixChain = {slotsPerEpoch: 8, secondsPerSlot: 4, committeesPerSlot: 2, pubkeys: Array.from({length: 64}, (_, i) => `0x${i.toString(16).padStart(96, "0")}`)};
const window = {chain, startSlot: 16, slots: 8};

function byClient(schedule: MixRequest[]): Map<number, MixRequest[]> {
  const clients = new Map<number, MixRequest[]>();
  for (const r of schedule) {
    const its = clients.get(r.client);
    if (its) its.push(r);
    else clients.set(r.client, [r]);
  }
  return clients;
}

describe("bench:api's mix", () => {
  it("is the same schedule for the same seed, another for another seed", () => {
    const a = mixSchedule({...window, seed: 7, rate: 100});
    expect(mixSchedule({...window, seed: 7, rate: 100})).toEqual(a);
    expect(mixSchedule({...window, seed: 8, rate: 100})).not.toEqual(a);
    // sorted by time; the window's rate reached with clients, not with repeats
    expect(a.every((r, i) => i === 0 || a[i - 1].atMs <= r.atMs)).toBe(true);
    expect(a.length).toBeGreaterThanOrEqual(100 * 32);
    // a higher rate adds clients and leaves the first ones' requests as they were
    const more = mixSchedule({...window, seed: 7, rate: 200});
    const firstClients = new Set(a.map((r) => r.client));
    expect(more.filter((r) => firstClients.has(r.client))).toEqual(a);
  });

  it("spreads over the validators: varied index sets, every validator asked about, by index and by pubkey", () => {
    const schedule = mixSchedule({...window, seed: 1, rate: 300});
    const attester = schedule.filter((r) => r.path.startsWith("/eth/v1/validator/duties/attester/"));
    const sets = attester.map((r) => JSON.parse(r.body!) as string[]);
    expect(new Set(sets.map((s) => s.length)).size).toBeGreaterThanOrEqual(5);
    expect(new Set(sets.flat()).size).toBe(64);
    const byPubkey = schedule.filter((r) => r.path.startsWith("/eth/v1/beacon/states/head/validators?id=0x"));
    expect(new Set(byPubkey.flatMap((r) => r.path.split("?id=")[1].split(","))).size).toBe(64);
    expect(schedule.some((r) => /\/validators\?id=\d/.test(r.path))).toBe(true);
    expect(schedule.some((r) => /\/validators\/0x/.test(r.path))).toBe(true);
    const categories = new Set(schedule.map((r) => r.category));
    expect([...categories].sort()).toEqual(["attestation_data", "blocks", "duties", "node", "states", "validators"]);
  });

  it("asks the attestation data of every committee in every slot, a third into the slot, where the chain assigns duties", () => {
    const schedule = mixSchedule({...window, seed: 1, rate: 300});
    const asked = new Set<string>();
    for (const r of schedule.filter((r) => r.category === "attestation_data")) {
      const [, slot, committee] = /slot=(\d+)&committee_index=(\d+)/.exec(r.path)!.map(Number);
      asked.add(`${slot}:${committee}`);
      const intoSlot = r.atMs - (slot - window.startSlot) * 4000;
      expect(intoSlot).toBeGreaterThanOrEqual(4000 / 3);
      expect(intoSlot).toBeLessThan(4000);
    }
    for (let slot = 16; slot < 24; slot++) for (const c of [0, 1]) expect(asked.has(`${slot}:${c}`)).toBe(true);
    // a client asks for the slots and committees of its own validators' duties
    for (const [, requests] of byClient(schedule)) {
      const indices = requests.find((r) => r.path.includes("/duties/attester/"))?.body;
      if (!indices) continue;
      const own = new Set((JSON.parse(indices) as string[]).map(Number).map((v) => {
        const duty = attesterDuty(1, chain, 2, v);
        return `${16 + duty.slotInEpoch}:${duty.committee}`;
      }));
      const its = requests.filter((r) => r.category === "attestation_data").map((r) => /slot=(\d+)&committee_index=(\d+)/.exec(r.path)!.slice(1).join(":"));
      expect(new Set(its)).toEqual(own);
    }
  });

  it("repeats nothing within a client beyond its polls: node/syncing and the head's header once a slot", () => {
    const schedule = mixSchedule({...window, seed: 3, rate: 300});
    for (const [, requests] of byClient(schedule)) {
      const counts = new Map<string, number>();
      for (const r of requests) counts.set(requestKey(r), (counts.get(requestKey(r)) ?? 0) + 1);
      for (const [key, n] of counts) {
        if (key === "GET /eth/v1/node/syncing " || key === "GET /eth/v1/beacon/headers/head ") expect(n).toBeLessThanOrEqual(window.slots);
        else expect([key, n]).toEqual([key, 1]);
      }
    }
  });
});

describe("open-loop load", () => {
  it("sends each request at its time without waiting for earlier answers, and counts latency from that time", async () => {
    // answers nothing until all 20 requests have arrived: a closed loop of fewer connections would never finish
    const held: ServerResponse[] = [];
    const server = createServer((req, res) => {
      req.resume();
      held.push(res);
      if (held.length === 20) for (const r of held) r.writeHead(req.url === "/missing" ? 404 : 200).end("{}");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const schedule: MixRequest[] = Array.from({length: 20}, (_, i) => ({atMs: i * 10, client: i, category: "node", method: "GET", path: "/eth/v1/node/syncing"}));
      const outcomes = await runOpenLoop(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, schedule, Date.now());
      expect(outcomes.map((o) => o.status)).toEqual(Array(20).fill(200));
      // all answered at once: the first one sent waited longest
      expect(outcomes[0].latencyMs).toBeGreaterThan(outcomes[19].latencyMs);
      const summary = summarize(outcomes);
      expect([summary.requests, summary.failed, summary.non2xx]).toEqual([20, 0, 0]);
    } finally {
      server.close();
    }
  });

  it("counts a refused connection as failed and another status as non-2xx", async () => {
    const server = createServer((req, res) => res.writeHead(req.url === "/missing" ? 404 : 200).end("{}"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const schedule: MixRequest[] = [
      {atMs: 0, client: 0, category: "blocks", method: "GET", path: "/missing"},
      {atMs: 0, client: 0, category: "blocks", method: "GET", path: "/here"},
    ];
    const answered = summarize(await runOpenLoop(base, schedule, Date.now()));
    server.close();
    expect([answered.non2xx, answered.failed, answered.byCategory.get("blocks")?.non2xx]).toEqual([1, 0, 1]);
    const refused = summarize(await runOpenLoop(base, schedule, Date.now()));
    expect([refused.failed, refused.non2xx]).toEqual([2, 0]);
    // each kind once, with an example and the start of its message: the answer's body, or the error
    expect(unsuccessfulLine(answered.unsuccessful)).toBe("blocks 404 x1 (e.g. /missing: {})");
    expect(unsuccessfulLine(refused.unsuccessful)).toMatch(/^blocks 0 x2 \(e\.g\. \/missing: .*ECONNREFUSED.*\)$/);
  });
});

describe("the step search for the rate at p99 under 5 ms", () => {
  // a fake server: its p99 crosses 5 ms above `capacity`, and it drops requests above `breaks`
  const fake = (capacity: number, breaks = Infinity) => async (rate: number) => ({p99: rate <= capacity ? 2 : 9, failed: rate > breaks ? 3 : 0});

  it("doubles while the p99 holds, then bisects between the last rate that held and the first that did not", async () => {
    const {rate, probes} = await sustainedRate(fake(2600), {start: 1000, max: 64_000, p99Ms: 5, refine: 2});
    expect(probes.map((p) => [p.rate, p.ok])).toEqual([[1000, true], [2000, true], [4000, false], [3000, false], [2500, true]]);
    expect(rate).toBe(2500);
  });

  it("halves when the first rate fails, counts failed requests as not held, and stops at the maximum", async () => {
    expect((await sustainedRate(fake(300), {start: 1000, max: 64_000, p99Ms: 5, refine: 0})).rate).toBe(250);
    expect((await sustainedRate(fake(Infinity, 1500), {start: 1000, max: 64_000, p99Ms: 5, refine: 1})).rate).toBe(1500);
    expect((await sustainedRate(fake(Infinity), {start: 1000, max: 8000, p99Ms: 5})).rate).toBe(8000);
    expect((await sustainedRate(fake(10), {start: 1000, max: 8000, p99Ms: 5})).rate).toBe(0);
  });
});

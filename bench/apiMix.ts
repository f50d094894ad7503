// The realistic mix of `npm run bench:api` (bench/mix.ts): each server is sent the same seeded
// schedule of validator clients' and explorers' requests, open loop (bench/openLoop.ts), first at
// a fixed offered rate, then at rising rates to find the highest whose p99 stays under 5 ms. The
// bare server is sent the same schedule, each request answered with as many bytes as our node's
// answer to it: the ceiling for the same bytes, in the same run.
//
//   BENCH_MIX_RATE (1000 req/s offered, and where the search starts), BENCH_MIX_MAX (32000),
//   BENCH_MIX_SLOTS (the window of each run, in slots: an epoch's less two, 6; the other beacon
//   node is stopped meanwhile, and Lodestar 1.5.1, its head more than an epoch behind the clock
//   and no peer, answers duties 503 "Node is syncing - waiting for peers" and makes no block again),
//   BENCH_MIX_SEED (1), BENCH_MIX_REFINE (2 bisections after the doubling steps), BENCH_MIX_WARMUP (1
//   window at the fixed rate, unmeasured, before each server's runs), BENCH_LOAD_NICE (-20: the load
//   generator's priority, bench/loadGenerator.ts)
import {cpuMicros, getData} from "./harness.ts";
import {type Category, type MixChain, type MixRequest, mixSchedule, requestKey} from "./mix.ts";
import {LATE_MS, type LoadSummary, type Outcome, type Probe, loadGeneratorLine, percentile, runOpenLoop, summarize, sustainedRate, unsuccessfulLine} from "./openLoop.ts";
import {printMixReport} from "./mixReport.ts";

const RATE = Number(process.env.BENCH_MIX_RATE ?? 1000);
const MAX_RATE = Number(process.env.BENCH_MIX_MAX ?? 32_000);
const SEED = Number(process.env.BENCH_MIX_SEED ?? 1);
const REFINE = Number(process.env.BENCH_MIX_REFINE ?? 2);
const WARMUP_WINDOWS = Number(process.env.BENCH_MIX_WARMUP ?? 1);
export const MIX_P99_MS = LATE_MS;

export interface MixServer {
  name: string;
  base: string;
  pid: number;
}

/** A server's measurements: at the fixed rate, and the step search. */
export interface MixResult {
  name: string;
  fixed: LoadSummary & {offered: number; cpuUsPerRequest: number};
  sustained: {rate: number; probes: Probe[]; cpuUsPerRequest?: number};
}

/** Runs `run` with every beacon node but `measured` stopped. */
export type Isolation = <T>(measured: MixServer | undefined, run: () => Promise<T>) => Promise<T>;

export interface Timing {
  genesisMs: number;
  slotMs: number;
}

export async function timing(base: string): Promise<Timing> {
  const [genesis, spec] = await Promise.all([getData(base, "/eth/v1/beacon/genesis"), getData(base, "/eth/v1/config/spec")]);
  return {genesisMs: Number(genesis.genesis_time) * 1000, slotMs: Number(spec.SECONDS_PER_SLOT) * 1000};
}

/** The chain the mix is drawn for: our node's (the peer runs the same kind: same preset, validators, slots). */
export async function mixChain(base: string): Promise<MixChain> {
  const spec = await getData(base, "/eth/v1/config/spec");
  const validators = (await getData(base, "/eth/v1/beacon/states/head/validators")) as {validator: {pubkey: string}}[];
  const slotsPerEpoch = Number(spec.SLOTS_PER_EPOCH);
  const perSlot = Math.floor(validators.length / slotsPerEpoch / Number(spec.TARGET_COMMITTEE_SIZE));
  return {
    slotsPerEpoch,
    secondsPerSlot: Number(spec.SECONDS_PER_SLOT),
    committeesPerSlot: Math.max(1, Math.min(Number(spec.MAX_COMMITTEES_PER_SLOT), perSlot)),
    pubkeys: validators.map((v) => v.validator.pubkey),
  };
}

/**
 * One window of the mix on a server at `rate`, from the server's next epoch, so the slots its
 * requests name are that chain's: each request's outcome (in schedule order) and the server's CPU
 * per request. `isolated` stops the other beacon nodes for the window, not while it is awaited.
 */
export async function runWindow(
  server: MixServer,
  at: Timing,
  chain: MixChain,
  opts: {rate: number; slots: number; seed?: number; isolated: Isolation; rewrite?: (r: MixRequest) => MixRequest},
): Promise<{outcomes: Outcome[]; schedule: MixRequest[]; offered: number; cpuUsPerRequest: number}> {
  // from the next epoch's start: every server gets the same slots of an epoch, its duties burst included
  const startSlot = Math.ceil((Math.floor((Date.now() - at.genesisMs) / at.slotMs) + 1) / chain.slotsPerEpoch) * chain.slotsPerEpoch;
  const schedule = mixSchedule({seed: opts.seed ?? SEED, chain, startSlot, slots: opts.slots, rate: opts.rate});
  const sent = opts.rewrite ? schedule.map(opts.rewrite) : schedule;
  const startAtMs = at.genesisMs + startSlot * at.slotMs;
  // the others are stopped for the window only, not while it is awaited (see BENCH_MIX_SLOTS)
  await new Promise((r) => setTimeout(r, Math.max(0, startAtMs - Date.now() - 200)));
  return opts.isolated(server, async () => {
    const cpuBefore = cpuMicros(server.pid);
    const outcomes = await runOpenLoop(server.base, sent, startAtMs);
    const cpuUsPerRequest = (cpuMicros(server.pid) - cpuBefore) / Math.max(1, outcomes.length);
    return {outcomes, schedule, offered: schedule.length / ((opts.slots * at.slotMs) / 1000), cpuUsPerRequest};
  });
}

/** One window of the mix on a server at `rate` (runWindow), summarized. */
async function runAt(
  server: MixServer,
  at: Timing,
  chain: MixChain,
  rate: number,
  slots: number,
  isolated: Isolation,
  rewrite?: (r: MixRequest) => MixRequest,
): Promise<{summary: LoadSummary; schedule: MixRequest[]; bytes: number[]; offered: number; cpuUsPerRequest: number}> {
  const {outcomes, schedule, offered, cpuUsPerRequest} = await runWindow(server, at, chain, {rate, slots, isolated, rewrite});
  return {summary: summarize(outcomes), schedule, bytes: outcomes.map((o) => o.bytes), offered, cpuUsPerRequest};
}

/**
 * The mix on every server (`servers[0]` ours), each run with the others stopped by `isolated`,
 * then on the bare server (`ceiling`) with our node's answer sizes; prints the tables.
 */
export async function runMix(
  servers: MixServer[],
  ceiling: MixServer,
  isolated: Isolation,
  heading: string[],
): Promise<MixResult[]> {
  const chain = await mixChain(servers[0].base);
  const slots = Number(process.env.BENCH_MIX_SLOTS ?? Math.max(1, chain.slotsPerEpoch - 2));
  const results: MixResult[] = [];
  // our node's answer sizes by request, for the bare server's answers (by category where a request was never sent to it)
  const sizes = new Map<string, number>();
  const sizesByCategory = new Map<Category, number[]>();
  const remember = (schedule: MixRequest[], bytes: number[]): void => {
    schedule.forEach((r, i) => {
      sizes.set(requestKey(r), bytes[i]);
      const seen = sizesByCategory.get(r.category) ?? [];
      if (seen.length < 2000) seen.push(bytes[i]);
      sizesByCategory.set(r.category, seen);
    });
  };
  const measureServer = async (server: MixServer, at: Timing, rewrite?: (r: MixRequest) => MixRequest, learn = false): Promise<MixResult> => {
    console.log(`  mix on ${server.name}: ${RATE} req/s offered, ${slots} slots`);
    // unmeasured first: a server's paths not yet run hot are compiled under its first load (as the single endpoints' warm-up)
    for (let i = 0; i < WARMUP_WINDOWS; i++) await runAt(server, at, chain, RATE, slots, isolated, rewrite);
    const fixed = await runAt(server, at, chain, RATE, slots, isolated, rewrite);
    if (learn) remember(fixed.schedule, fixed.bytes);
    const cpuByRate = new Map<number, number>();
    const sustained = await sustainedRate(
      async (rate) => {
        const run = await runAt(server, at, chain, rate, slots, isolated, rewrite);
        if (learn) remember(run.schedule, run.bytes);
        cpuByRate.set(rate, run.cpuUsPerRequest);
        const unsuccessful = run.summary.unsuccessful.size > 0 ? `: ${unsuccessfulLine(run.summary.unsuccessful)}` : "";
        console.log(`    ${rate} req/s offered: p99 ${run.summary.p99.toFixed(1)} ms, ${run.summary.failed} failed, ${run.summary.non2xx} non-2xx${unsuccessful}`);
        return {p99: run.summary.p99, failed: run.summary.failed};
      },
      {start: RATE, max: MAX_RATE, p99Ms: MIX_P99_MS, refine: REFINE},
    );
    return {
      name: server.name,
      fixed: {...fixed.summary, offered: fixed.offered, cpuUsPerRequest: fixed.cpuUsPerRequest},
      sustained: {...sustained, cpuUsPerRequest: cpuByRate.get(sustained.rate)},
    };
  };
  for (const [i, server] of servers.entries()) results.push(await measureServer(server, await timing(server.base), undefined, i === 0));
  // the bare server: the same schedule on our node's clock, each answer as many bytes as our node's
  const asBytes = (r: MixRequest): MixRequest => {
    const bytes = sizes.get(requestKey(r)) ?? Math.round(percentile(sizesByCategory.get(r.category) ?? [30], 50));
    return {...r, method: "GET", path: `/?bytes=${bytes}`, body: undefined};
  };
  results.push(await measureServer(ceiling, await timing(servers[0].base), asBytes));
  printMixReport(results, {heading: [...heading, await loadGeneratorLine()], rate: RATE, slots, seed: SEED, p99Ms: MIX_P99_MS});
  return results;
}

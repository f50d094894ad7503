import {getJson} from "../e2e/nodeProcess.ts";
import {SignatureWatch, followEvents} from "../soak/signatureWatch.ts";
import {type BlocksRead, FinalityLog, checkBlocks, forkChoiceRoots, restJson, sampleNodes} from "./chainChecks.ts";
import type {CutMode} from "./loopbackProxy.ts";
import {ProxiedDevnet} from "./proxiedDevnet.ts";

/**
 * A split network: four nodes, a quarter of the validators each, every link through a proxy.
 * The network is cut between nodes {0, 1} and {2, 3} for `cutEpochs` epochs (each half keeps
 * proposing on its own branch; with half the stake neither can justify), then healed: the
 * nodes must agree on one head again and finalize an epoch after the cut. Then, optionally, one
 * node's links flap (cut and healed every few seconds) while the other three keep finalizing.
 * Throughout, each node's finalized checkpoint must only move forward and agree with the
 * others', and nothing any node saw (event streams: its pool and imports; at the end, every
 * block of both branches) may hold two slashable signatures of one validator.
 */

export interface SplitOptions {
  /** epochs the network stays cut in two */
  cutEpochs: number;
  mode: CutMode;
  /** seconds per slot (default 3: what four nodes on two cores carry, see run.ts) */
  secondsPerSlot?: number;
  /** wait for finality after the heal (default true; the suite's short slice leaves it to the whole run) */
  finality?: boolean;
  /** seconds each way of node 3's flapping links, and how many epochs it lasts (0: no flapping) */
  flap?: {seconds: number; epochs: number};
  log?: (line: string) => void;
  /** a directory where node 0 writes a CPU profile (`--cpu-prof`) when it stops */
  cpuProfileDir?: string;
}

export interface SplitReport {
  cutSlot: number;
  healSlot: number;
  /** slots from the heal until all four nodes had one head */
  convergedAfterSlots: number;
  /** the finalized epoch when the cut began, the highest during the cut, the first after the heal (when waited for) */
  finalized: {atCut: number; duringCut: number; afterHeal: number; atEnd: number};
  /** each half's head slot when the heal came, and whether their heads differed */
  heads: {half0: number; half1: number; diverged: boolean};
  flap?: {toggles: number; finalizedBefore: number; finalizedAfter: number};
  observed: {votes: number; proposals: number; blocksRead: number; blocksWithoutState: number};
  problems: string[];
}

const SLOTS_PER_EPOCH = 8;
const VALIDATORS = 64;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runSplit(opts: SplitOptions): Promise<SplitReport> {
  const log = opts.log ?? (() => undefined);
  const secondsPerSlot = opts.secondsPerSlot ?? 3;
  const devnet = await ProxiedDevnet.start({
    nodes: 4,
    validators: VALIDATORS,
    secondsPerSlot,
    // the nodes load (the KZG trusted setup, among the rest) before the chain starts
    genesisDelaySeconds: 18,
    // one node on each side keeps every data column, so each half can sample and later sync the other's
    extraArgs: (i) => ["--dev-blobs-per-block", "1", ...(i === 0 || i === 2 ? ["--subscribe-all-subnets"] : [])],
    extraEnv: (i): Record<string, string> => (i === 0 && opts.cpuProfileDir ? {NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${opts.cpuProfileDir}`} : {}),
  });
  const urls = devnet.nodes.map((n) => n.url);
  const watch = new SignatureWatch();
  const finality = new FinalityLog();
  const blockRoots = new Set<string>();
  const blocks: BlocksRead = {done: new Set(), read: 0, stateless: 0};
  /** every block of every node's fork choice and event stream, read while its state is there */
  const readBlocks = async () => {
    for (const url of urls) for (const root of await forkChoiceRoots(url)) blockRoots.add(root);
    await checkBlocks(urls, blockRoots, watch, blocks);
  };
  const stopEvents = new AbortController();
  const events = urls.map((url) => followEvents(url, watch, stopEvents.signal, (root) => blockRoots.add(root)).catch(() => undefined));
  const problems: string[] = [];
  const sample = () => sampleNodes(urls, finality);
  const genesisTime = Number((await restJson(urls[0], "/eth/v1/beacon/genesis")).data.genesis_time);
  const clockSlot = () => Math.floor((Date.now() / 1000 - genesisTime) / secondsPerSlot);
  const untilSlot = async (slot: number) => {
    while (clockSlot() < slot) {
      await sample().catch(() => undefined);
      await sleep(500);
    }
  };
  const waitUntil = async <T>(what: string, slots: number, probe: () => Promise<T | null>): Promise<T> => {
    const deadline = clockSlot() + slots;
    for (;;) {
      const value = await probe().catch(() => null);
      if (value !== null) return value;
      if (clockSlot() > deadline) throw new Error(`${what}: not within ${slots} slots`);
      await sleep(500);
    }
  };

  try {
    // the full mesh, and a few blocks everyone agrees on
    await waitUntil("every node connected to the other three", 60, async () => ((await devnet.peerCounts()).every((c) => c === 3) ? true : null));
    // the cut waits for a chain that keeps up with the clock: four nodes starting at once are busy
    // for their first slots, and a node that hears its peers late then takes its clock for off
    // and signs nothing for a while (which would leave a half silent through the cut)
    await waitUntil("the chain to keep up with the clock", 4 * SLOTS_PER_EPOCH, async () => {
      const views = await sample();
      return clockSlot() >= SLOTS_PER_EPOCH && views.every((v) => v.slot >= clockSlot() - 1) ? true : null;
    });
    const atCut = Math.max(...(await sample()).map((s) => s.finalized));
    const cutSlot = clockSlot();
    devnet.cut([0, 1], opts.mode);
    log(`slot ${cutSlot}: cut {0,1} | {2,3} (${opts.mode}), finalized epoch ${atCut}`);

    // cut: each half on its own, neither finalizing what came after the cut
    const healSlot = cutSlot + opts.cutEpochs * SLOTS_PER_EPOCH;
    let duringCut = atCut;
    while (clockSlot() < healSlot) {
      const views = await sample().catch(() => null);
      if (views) duringCut = Math.max(duringCut, ...views.map((v) => v.finalized));
      await sleep(500);
    }
    const peers = await devnet.peerCounts();
    if (peers.some((c) => c !== 1)) problems.push(`during the cut each node should see only its half: peers ${peers.join(",")}`);
    const beforeHeal = await sample();
    const heads = {half0: Math.max(beforeHeal[0].slot, beforeHeal[1].slot), half1: Math.max(beforeHeal[2].slot, beforeHeal[3].slot), diverged: beforeHeal[0].root !== beforeHeal[2].root};
    if (!heads.diverged) problems.push("the halves never went apart: the cut did not hold");
    if (Math.min(heads.half0, heads.half1) <= cutSlot) problems.push(`a half stopped proposing during the cut: heads ${heads.half0}, ${heads.half1} (cut at ${cutSlot})`);
    if (duringCut > Math.floor(cutSlot / SLOTS_PER_EPOCH)) problems.push(`a half finalized epoch ${duringCut} during the cut, with half the stake`);
    devnet.healAll();
    log(`slot ${clockSlot()}: healed; heads ${heads.half0} and ${heads.half1}, finalized epoch ${duringCut}`);

    // heal: one head again, then finality of an epoch after the cut
    const converged = await waitUntil("all four nodes on one head", 4 * SLOTS_PER_EPOCH, async () => {
      const views = await sample();
      return new Set(views.map((v) => v.root)).size === 1 && views[0].slot >= healSlot ? clockSlot() : null;
    });
    log(`slot ${converged}: one head on all four nodes`);
    // both branches are still in fork choice (nothing after the cut is finalized): their blocks' states are there
    await readBlocks();
    const cutEpoch = Math.floor(cutSlot / SLOTS_PER_EPOCH);
    if (opts.finality ?? true) {
      // each probe samples the nodes: the finality log holds only what samples reported
      await waitUntil("finality after the heal", 8 * SLOTS_PER_EPOCH, async () => {
        await sample();
        return finality.lowest(4) > cutEpoch ? true : null;
      });
      log(`slot ${clockSlot()}: finalized epoch ${finality.lowest(4)} on all four nodes`);
    }
    const afterHeal = finality.lowest(4);

    let flap: SplitReport["flap"];
    if (opts.flap) {
      const links = devnet.linksAcross([3]);
      const end = clockSlot() + opts.flap.epochs * SLOTS_PER_EPOCH;
      const finalizedBefore = finality.lowest(4);
      let toggles = 0;
      while (clockSlot() < end) {
        for (const link of links) toggles % 2 === 0 ? link.cutLink(opts.mode) : link.heal();
        toggles++;
        const until = Date.now() + opts.flap.seconds * 1000;
        while (Date.now() < until) {
          await sample().catch(() => undefined);
          await sleep(500);
        }
      }
      for (const link of links) link.heal();
      // three nodes of four (three quarters of the stake) stay together through the flapping
      const finalizedAfter = Math.max(...(await sample()).slice(0, 3).map((v) => v.finalized));
      flap = {toggles, finalizedBefore, finalizedAfter};
      if (finalizedAfter <= finalizedBefore) problems.push(`finality stood still while node 3's link flapped (epoch ${finalizedBefore})`);
      log(`slot ${clockSlot()}: node 3's links flapped ${toggles} times; finalized ${finalizedBefore} -> ${finalizedAfter}`);
      await waitUntil("all four nodes on one head after the flapping", 4 * SLOTS_PER_EPOCH, async () => (new Set((await sample()).map((v) => v.root)).size === 1 ? true : null));
    }

    // every finalized checkpoint any node reported is still on every node's chain
    const atEnd = finality.lowest(4);
    for (const [epoch, root] of finality.roots) {
      if (epoch === 0) continue;
      for (const [i, url] of urls.entries()) {
        const {status, body} = await getJson(url, `/eth/v1/beacon/headers/${root}`);
        const canonical = status === 200 && body.data.canonical === true;
        if (!canonical) problems.push(`node ${i}: finalized checkpoint of epoch ${epoch} (${root}) is not on its chain`);
      }
    }
    stopEvents.abort();
    await Promise.all(events);
    await readBlocks();
    return {
      cutSlot,
      healSlot,
      convergedAfterSlots: converged - healSlot,
      finalized: {atCut, duringCut, afterHeal, atEnd},
      heads,
      flap,
      observed: {...watch.observed, blocksRead: blocks.read, blocksWithoutState: blocks.stateless},
      problems: [...problems, ...finality.problems, ...watch.problems],
    };
  } finally {
    stopEvents.abort();
    await devnet.stop();
  }
}

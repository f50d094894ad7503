// `npm run bench:memory`: the node's memory over a long run of the dev chain. A chain of 64
// validators (minimal preset, fulu) runs for BENCH_MEMORY_EPOCHS epochs (default 1,000) as fast
// as this machine allows, driven by hand (drivenChain.ts: blocks and every attestation, so it
// finalizes as a live chain does). Every BENCH_MEMORY_SAMPLE epochs (default 50) the heap is
// measured after a full GC, beside the state cache and fork choice sizes.
//
// Bounded means: the heap of the last sample is within 25% of the heap at the first sample
// taken after epoch 100 (when the caches are full), and finality kept up with the head.
//
//   BENCH_MEMORY_EPOCHS (default 1000), BENCH_MEMORY_SAMPLE (default 50)

// (machine.ts loads no lodestar module)
import {OUR_NAME, measuredMachineLine} from "./machine.ts";

// the dev chain's preset, fixed before any lodestar module loads (they are imported below)
process.env.LODESTAR_PRESET ??= "minimal";
// SSZ roots with the hasher the node runs (src/hasher.ts), in this process too
await (await import("../src/hasher.ts")).useFastestHasher();
const {SLOTS_PER_EPOCH} = await import("@lodestar/params");
const {initLogging, parseLogDirective} = await import("../src/log.ts");
const {startDrivenChain} = await import("./drivenChain.ts");
type BeaconChain = import("../src/chain/beaconChain.ts").BeaconChain;

const EPOCHS = Number(process.env.BENCH_MEMORY_EPOCHS ?? 1000);
const SAMPLE_EVERY = Number(process.env.BENCH_MEMORY_SAMPLE ?? 50);
const VALIDATORS = 64;
const WARM_EPOCH = 100;
const BOUND = 1.25;

const gc = (globalThis as {gc?: () => void}).gc;
if (!gc) throw new Error("run with --expose-gc (npm run bench:memory does)");

interface Sample {
  epoch: number;
  heapMiB: number;
  rssMiB: number;
  states: number;
  stateCacheMiB: number;
  forkChoiceNodes: number;
  finalizedEpoch: number;
}

function measure(epoch: number, chain: BeaconChain): Sample {
  for (let i = 0; i < 3; i++) gc!();
  const usage = process.memoryUsage();
  return {
    epoch,
    heapMiB: usage.heapUsed / 2 ** 20,
    rssMiB: usage.rss / 2 ** 20,
    states: chain.cachedStateCount(),
    stateCacheMiB: chain.cachedStateBytes() / 2 ** 20,
    forkChoiceNodes: chain.forkChoice.getAllNodes().length,
    finalizedEpoch: chain.getFinalizedCheckpoint().epoch,
  };
}

async function main(): Promise<void> {
  // the machine, and the bare server's rate on it now, before the chain runs
  const machine = await measuredMachineLine();
  initLogging({directive: parseLogDirective("WARN"), format: "json"});
  const driven = await startDrivenChain({validators: VALIDATORS, secondsPerSlot: 4});
  const samples: Sample[] = [];
  const started = performance.now();
  const lastSlot = EPOCHS * SLOTS_PER_EPOCH;
  console.log(`${EPOCHS} epochs (${lastSlot} slots) of a ${VALIDATORS}-validator dev chain, sampled every ${SAMPLE_EVERY} epochs`);
  console.log("epoch  heap MiB  rss MiB  states  state cache MiB  fork choice nodes  finalized");
  for (let slot = 1; slot <= lastSlot; slot++) {
    await driven.runSlot(slot);
    if (slot % (SAMPLE_EVERY * SLOTS_PER_EPOCH) === 0) {
      const s = measure(slot / SLOTS_PER_EPOCH, driven.chain);
      samples.push(s);
      console.log(
        `${String(s.epoch).padStart(5)}  ${s.heapMiB.toFixed(1).padStart(8)}  ${s.rssMiB.toFixed(0).padStart(7)}  ${String(s.states).padStart(6)}  ` +
          `${s.stateCacheMiB.toFixed(2).padStart(15)}  ${String(s.forkChoiceNodes).padStart(17)}  ${String(s.finalizedEpoch).padStart(9)}`
      );
    }
  }
  const seconds = (performance.now() - started) / 1000;
  await driven.close();

  const warm = samples.find((s) => s.epoch >= WARM_EPOCH) ?? samples[0];
  const last = samples.at(-1)!;
  const growth = last.heapMiB / warm.heapMiB;
  // a chain whose every committee attests finalizes the epoch two before the current one
  const finalityKeptUp = EPOCHS - last.finalizedEpoch <= 2;
  console.log(`\n${OUR_NAME}; ${machine}`);
  console.log(`${lastSlot} blocks in ${seconds.toFixed(0)} s (${(lastSlot / seconds).toFixed(1)} slots/s)`);
  console.log(`heap at epoch ${warm.epoch}: ${warm.heapMiB.toFixed(1)} MiB; at epoch ${last.epoch}: ${last.heapMiB.toFixed(1)} MiB (x${growth.toFixed(2)})`);
  console.log(`finalized epoch at the end: ${last.finalizedEpoch} of ${EPOCHS}`);
  console.log(`bounded (heap within x${BOUND} of epoch ${warm.epoch}, finality kept up): ${growth <= BOUND && finalityKeptUp ? "yes" : "NO"}`);
}

await main();

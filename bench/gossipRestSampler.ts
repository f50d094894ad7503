// bench:gossip's light REST load and head watch, on a worker thread so that what it times is the
// node and not the bench's own publishing: a request every `intervalMs`, in turn node/syncing,
// the head's header, finality checkpoints, attestation data of the current slot and proposer
// duties; and the node's head events, with when each arrived.
import {parentPort, workerData} from "node:worker_threads";

const {base, intervalMs, genesisMs, secondsPerSlot} = workerData as {base: string; intervalMs: number; genesisMs: number; secondsPerSlot: number};
const slotNow = () => Math.max(0, Math.floor((Date.now() - genesisMs) / (secondsPerSlot * 1000)));
const paths = [
  () => "/eth/v1/node/syncing",
  () => "/eth/v1/beacon/headers/head",
  () => "/eth/v1/beacon/states/head/finality_checkpoints",
  () => `/eth/v1/validator/attestation_data?slot=${slotNow()}&committee_index=${slotNow() % 64}`,
  () => `/eth/v1/validator/duties/proposer/${Math.floor(slotNow() / 32)}`,
];
const latencies: number[] = [];
let failures = 0;
const heads: Array<{slot: number; atMs: number}> = [];
let stopped = false;
const events = new AbortController();

parentPort!.on("message", () => {
  stopped = true;
  events.abort();
});

async function watchHeads(): Promise<void> {
  try {
    const res = await fetch(`${base}/eth/v1/events?topics=head`, {signal: events.signal});
    let buffer = "";
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += Buffer.from(chunk).toString();
      let nl: number;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (line.startsWith("data:")) heads.push({slot: Number(JSON.parse(line.slice(5)).slot), atMs: Date.now()});
      }
    }
  } catch {
    // aborted at the end
  }
}

async function load(): Promise<void> {
  for (let i = 0; !stopped; i++) {
    const start = performance.now();
    try {
      const res = await fetch(base + paths[i % paths.length](), {signal: AbortSignal.timeout(10_000)});
      await res.arrayBuffer();
      if (res.status !== 200) failures++;
    } catch {
      failures++;
    }
    const ms = performance.now() - start;
    latencies.push(ms);
    await new Promise((r) => setTimeout(r, Math.max(0, intervalMs - ms)));
  }
}

const watching = watchHeads();
await load();
await watching;
parentPort!.postMessage({latencies, failures, heads});

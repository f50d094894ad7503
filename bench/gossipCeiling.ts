// The ceilings of bench:gossip, on the very messages the node is sent: the raw rate of their
// signature sets through @chainsafe/blst (batched, on as many worker threads as the node's BLS
// pool), and the raw cost of taking each message off the wire (snappy, then SSZ decoding).
import {Worker} from "node:worker_threads";
import {uncompressSync} from "snappy";
import type {GossipKind, GossipRecord} from "./gossipCache.ts";

/** the node's batch size (src/bls/workerPool.ts MAX_BATCH_SETS) */
const BATCH_SETS = 128;

export interface BlstCeiling {
  sets: number;
  threads: number;
  /** wall time of the slowest thread */
  seconds: number;
  /** CPU time of all threads */
  cpuSeconds: number;
  setsPerSecond: number;
  valid: boolean;
}

/** Every set of `records`, split evenly over `threads` workers, each verifying its share in batches; the wall time of all. */
export async function blstCeiling(records: GossipRecord[], threads: number): Promise<BlstCeiling> {
  const sets = records.flatMap((r) => r.sets);
  const shares = Array.from({length: threads}, (_, t) => sets.filter((_, i) => i % threads === t));
  const packed = shares.map((share) => {
    const msgs = new Uint8Array(share.length * 32);
    const pks = new Uint8Array(share.length * 96);
    const sigs = new Uint8Array(share.length * 96);
    share.forEach((s, i) => {
      msgs.set(s.msg, i * 32);
      pks.set(s.pk, i * 96);
      sigs.set(s.sig, i * 96);
    });
    return {msgs, pks, sigs, batch: BATCH_SETS};
  });
  // the whole process's CPU time: blst checks a batch's pairings on threads of its own, beside
  // the worker that calls it (this thread only waits meanwhile)
  const cpuBefore = process.cpuUsage();
  const results = await Promise.all(
    packed.map(
      (data) =>
        new Promise<{ms: number; valid: boolean}>((resolve, reject) => {
          const worker = new Worker(new URL("./gossipBlstWorker.ts", import.meta.url), {workerData: data, transferList: [data.msgs.buffer, data.pks.buffer, data.sigs.buffer]});
          worker.once("message", (m) => {
            resolve(m);
            void worker.terminate();
          });
          worker.once("error", reject);
        })
    )
  );
  // the workers' own time: their start-up is not the library's
  const seconds = Math.max(...results.map((r) => r.ms)) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  return {sets: sets.length, threads, seconds, cpuSeconds, setsPerSecond: sets.length / seconds, valid: results.every((r) => r.valid)};
}

export interface DecodeCost {
  messages: number;
  /** snappy decompression, µs a message */
  snappyUs: number;
  /** SSZ deserialization, µs a message */
  sszUs: number;
}

/** Per kind, the mean cost of decompressing and deserializing its messages (on this thread, the best of 3 passes). */
export async function decodeCeiling(records: GossipRecord[]): Promise<Map<GossipKind, DecodeCost>> {
  const {ssz} = await import("@lodestar/types");
  const types: Record<GossipKind, {deserialize(bytes: Uint8Array): unknown}> = {
    beacon_block: ssz.bellatrix.SignedBeaconBlock,
    beacon_aggregate_and_proof: ssz.phase0.SignedAggregateAndProof,
    beacon_attestation: ssz.phase0.Attestation,
    sync_committee_contribution_and_proof: ssz.altair.SignedContributionAndProof,
    sync_committee: ssz.altair.SyncCommitteeMessage,
  };
  const costs = new Map<GossipKind, DecodeCost>();
  for (const kind of Object.keys(types) as GossipKind[]) {
    const data = records.filter((r) => r.kind === kind).map((r) => r.data);
    if (data.length === 0) continue;
    let snappyMs = Infinity;
    let sszMs = Infinity;
    for (let pass = 0; pass < 3; pass++) {
      const t0 = performance.now();
      const raw = data.map((d) => uncompressSync(Buffer.from(d.buffer, d.byteOffset, d.byteLength)) as Buffer);
      const t1 = performance.now();
      for (const bytes of raw) types[kind].deserialize(bytes);
      const t2 = performance.now();
      snappyMs = Math.min(snappyMs, t1 - t0);
      sszMs = Math.min(sszMs, t2 - t1);
    }
    costs.set(kind, {messages: data.length, snappyUs: (snappyMs * 1000) / data.length, sszUs: (sszMs * 1000) / data.length});
  }
  return costs;
}

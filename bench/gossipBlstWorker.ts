// A worker of bench:gossip's blst ceiling (bench/gossipCeiling.ts): verifies its share of the sets
// with @chainsafe/blst alone, in batches as the node's pool makes them (one multi-pairing a batch),
// keys and signatures read from bytes as the node's workers read them; reports the time and
// whether every batch was valid (the CPU time is the process's, taken by the caller: blst runs
// a batch's pairings on threads of its own).
import {PublicKey, Signature, verifyMultipleAggregateSignatures} from "@chainsafe/blst";
import {parentPort, workerData} from "node:worker_threads";

const {msgs, pks, sigs, batch} = workerData as {msgs: Uint8Array; pks: Uint8Array; sigs: Uint8Array; batch: number};
const count = msgs.length / 32;
const started = performance.now();
let valid = true;
for (let from = 0; from < count; from += batch) {
  const sets = [];
  for (let i = from; i < Math.min(count, from + batch); i++) {
    sets.push({msg: msgs.subarray(i * 32, i * 32 + 32), pk: PublicKey.fromBytes(pks.subarray(i * 96, i * 96 + 96), false), sig: Signature.fromBytes(sigs.subarray(i * 96, i * 96 + 96), true)});
  }
  if (!verifyMultipleAggregateSignatures(sets)) valid = false;
}
parentPort!.postMessage({ms: performance.now() - started, valid});

import {readFileSync} from "node:fs";
import {processSlots} from "@lodestar/state-transition";
import {genesisStateFromBytes} from "./src/chain/genesis.ts";
import {devChainConfig} from "./src/config/chainConfig.ts";
import {StateCache} from "./src/chain/stateCache.ts";
const gc = (globalThis as any).gc;
const heap = () => { for (let i=0;i<3;i++) gc(); const u = process.memoryUsage(); return u.heapUsed + u.arrayBuffers; };
const config = devChainConfig({secondsPerSlot: 4, genesisFork: "bellatrix", forkEpochs: {}});
let bytes: Uint8Array | null = new Uint8Array(readFileSync("/tmp/beacon-gateway-scale-1000000.ssz"));
const h0 = heap();
let t = Date.now();
const s = genesisStateFromBytes(config, bytes); bytes = null;
console.log("load", Date.now() - t);
const h1 = heap();
const cache = new StateCache(Number.MAX_SAFE_INTEGER);
t = Date.now(); cache.add("0", s); console.log("full walk ms", Date.now() - t, "est MB", cache.bytes/1e6, "measured MB", (h1-h0)/1e6);
let prev = s;
for (const slot of [32, 33, 64]) {
  t = Date.now();
  const n = processSlots(prev.clone(true), slot, {dontTransferCache: true}); n.commit();
  const tr = Date.now() - t;
  const b = cache.bytes; const hb = heap();
  t = Date.now(); cache.add(String(slot), n, slot === 32 ? "0" : String(prev.slot)); const tw = Date.now() - t;
  const ha = heap();
  console.log("slot", slot, "transition ms", tr, "diff ms", tw, "est MB", (cache.bytes - b)/1e6, "measured(approx, before/after)", (ha-hb)/1e6);
  prev = n;
}

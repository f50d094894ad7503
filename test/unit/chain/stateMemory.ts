// Run with --expose-gc (stateCache.test.ts does): holds a chain of states in a StateCache and
// prints, as one JSON line, what V8 measured the states to hold beside what the cache estimated.
import {computeStartSlotAtEpoch, processSlots, type CachedBeaconStateAllForks} from "@lodestar/state-transition";
import {SLOTS_PER_EPOCH} from "@lodestar/params";
import {StateCache} from "../../../src/chain/stateCache.ts";
import {appendInteropValidators, createInteropGenesisState, genesisStateFromBytes} from "../../../src/chain/genesis.ts";
import {devChainConfig} from "../../../src/config/chainConfig.ts";

const VALIDATORS = Number(process.argv[2] ?? 16384);
const EPOCHS = Number(process.argv[3] ?? 6);

const gc = (globalThis as unknown as {gc: () => void}).gc;
function heapBytes(): number {
  for (let i = 0; i < 3; i++) gc();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
}

const config = devChainConfig({secondsPerSlot: 6, genesisFork: "fulu", forkEpochs: {}});
let bytes: Uint8Array | null;
{
  const made = createInteropGenesisState(config, 64, 1_700_000_000);
  appendInteropValidators(made, VALIDATORS);
  bytes = made.serialize();
}
const beforeAnchor = heapBytes();
const anchor = genesisStateFromBytes(config, bytes);
bytes = null;
const cache = new StateCache(Number.MAX_SAFE_INTEGER);
cache.add("s0", anchor);
const afterAnchor = heapBytes();
const anchorEstimate = cache.bytes;

// Each state one slot or one epoch on from the last: epoch transitions rewrite balances, rotate
// participation and build a new shuffling; single slots only touch roots.
let state: CachedBeaconStateAllForks = anchor;
let key = "s0";
for (let epoch = 1; epoch <= EPOCHS; epoch++) {
  for (const slot of [computeStartSlotAtEpoch(epoch), computeStartSlotAtEpoch(epoch) + 1, computeStartSlotAtEpoch(epoch) + SLOTS_PER_EPOCH / 2]) {
    const next = processSlots(state.clone(true), slot, {dontTransferCache: true});
    next.commit();
    // what the node's reads do to a cached state (duties, the validators route)
    next.validators.getAllReadonlyValues();
    next.balances.getAll();
    cache.add(`s${slot}`, next, key);
    state = next;
    key = `s${slot}`;
  }
}
const afterChain = heapBytes();
console.log(
  JSON.stringify({
    validators: anchor.validators.length,
    anchor: {measured: afterAnchor - beforeAnchor, estimated: anchorEstimate},
    derived: {states: cache.size - 1, measured: afterChain - afterAnchor, estimated: cache.bytes - anchorEstimate},
  })
);

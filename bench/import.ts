// `npm run bench:import`: blocks per second of the node's block import (chain.importBlock: regen,
// proposer and signature checks, the payload asked of the engine, the state transition, the
// state root, the store, fork choice, head and finality), replaying a dev chain segment into a
// fresh chain, against the raw rate of the same work done with the libraries alone:
// @lodestar/state-transition's processSlots and stateTransition (state root checked) plus one
// batch BLS verification (@chainsafe/blst) of each block's signature sets. Target: at least 0.9.
// Both run in this process, alternating, `BENCH_IMPORT_ROUNDS` times each; the best of each is kept.
//
//   BENCH_IMPORT_BLOCKS (default 64), BENCH_IMPORT_ROUNDS (default 3)
import type {CachedBeaconStateAllForks} from "@lodestar/state-transition";
import type {SignedBeaconBlock} from "@lodestar/types";

// the dev chain's preset, fixed before any lodestar module loads (they are imported below, in main)
process.env.LODESTAR_PRESET ??= "minimal";
// SSZ roots with the hasher the node runs (src/hasher.ts), in this process too
await (await import("../src/hasher.ts")).useFastestHasher();
const {Signature, verifyMultipleAggregateSignatures} = await import("@chainsafe/blst");
const {ForkSeq} = await import("@lodestar/params");
const {DataAvailabilityStatus, ExecutionPayloadStatus, getBlockSignatureSets, getSignatureSetPubkey, processSlots, stateTransition} = await import("@lodestar/state-transition");
const {freshChain, makeSegment, nodeImportRate} = await import("./segment.ts");

const BLOCKS = Number(process.env.BENCH_IMPORT_BLOCKS ?? 64);
const ROUNDS = Number(process.env.BENCH_IMPORT_ROUNDS ?? 3);
const TARGET = 0.9;

/** The libraries alone: each block's pre-state, its signatures in one batch, its transition with the state root checked. */
function rawReplay(genesis: CachedBeaconStateAllForks, blocks: SignedBeaconBlock[]): number {
  const start = performance.now();
  let state = genesis;
  for (const signedBlock of blocks) {
    const block = signedBlock.message;
    const pre = processSlots(state, block.slot, {dontTransferCache: true});
    const fork = pre.config.getForkSeq(block.slot);
    const indexed = block.body.attestations.map((att) => pre.epochCtx.getIndexedAttestation(fork, att as never));
    const sets = getBlockSignatureSets(pre.config, pre.epochCtx.currentSyncCommitteeIndexed, pre as never, signedBlock, indexed);
    const batch = sets.map((set) => ({msg: set.signingRoot, pk: getSignatureSetPubkey(set, pre.epochCtx.pubkeyCache), sig: Signature.fromBytes(set.signature, true)}));
    if (!verifyMultipleAggregateSignatures(batch)) throw new Error(`signatures of block ${block.slot} do not verify`);
    state = stateTransition(pre, signedBlock, {
      verifyStateRoot: true,
      verifyProposer: true,
      verifySignatures: false,
      executionPayloadStatus: fork >= ForkSeq.bellatrix ? ExecutionPayloadStatus.valid : ExecutionPayloadStatus.preMerge,
      dataAvailabilityStatus: DataAvailabilityStatus.Available,
      dontTransferCache: true,
    });
  }
  return blocks.length / ((performance.now() - start) / 1000);
}

async function main(): Promise<void> {
  console.log(`making a segment of ${BLOCKS} blocks on a dev chain (1 s slots)…`);
  const segment = await makeSegment(BLOCKS);
  // the raw replay starts from the same genesis state, built once
  const genesisChain = await freshChain(segment);
  const genesis = genesisChain.chain.getHeadState();
  const blocks = genesisChain.blocks;
  const raw: number[] = [];
  const node: number[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    raw.push(rawReplay(genesis, blocks));
    node.push(await nodeImportRate(segment));
    console.log(`round ${round}: raw ${raw.at(-1)!.toFixed(1)} blocks/s, node ${node.at(-1)!.toFixed(1)} blocks/s`);
  }
  await genesisChain.close();
  const ratio = Math.max(...node) / Math.max(...raw);
  console.log(`\n${blocks.length} blocks (slots 1–${BLOCKS}), best of ${ROUNDS} rounds each, SSZ hasher ${(await import("../src/hasher.ts")).hasherName()}`);
  console.log(`raw (state-transition + batch BLS): ${Math.max(...raw).toFixed(1)} blocks/s`);
  console.log(`node import (chain.importBlock):    ${Math.max(...node).toFixed(1)} blocks/s`);
  console.log(`node / raw: ${ratio.toFixed(2)} (target ≥ ${TARGET}: ${ratio >= TARGET ? "met" : "NOT met"})`);
}

await main();

// The blocks of `bench:sync --scale`: a segment of consecutive mainnet-shaped bellatrix blocks on
// bench:scale's state of a million validators (bench/scaleState.ts), made once and kept on disk
// as gossip records (bench/gossipCache.ts: kind beacon_block, SSZ snappy-compressed, no sets).
// Each block at slot s carries MAX_ATTESTATIONS (128) attestations with every aggregation bit set:
// the 64 committees of slot s-1 and the 64 of slot s-2 (with a million validators a slot has 64
// committees of about 488, so a block of 128 full aggregates takes two slots' committees; slot
// s-2's were in block s-1 already and credit nobody new, but cost the importer the same checks),
// a sync aggregate with all 512 bits, and the mock engine's payload (the scale state is merged at
// genesis). Signing is cheap because BLS is linear: a committee's aggregate signature is one
// signature with the sum (mod r) of its members' interop secret keys, likewise the sync
// aggregate's. State roots come from the state transition (signatures not checked here: the
// bench imports every block with full verification and fails if one does not import).
import {uncompressSync, compressSync} from "snappy";
import type {GossipRecord} from "./gossipCache.ts";
import {CacheWriter, cacheFile, findCache, readCache} from "./gossipCache.ts";
import {SCALE_SECONDS_PER_SLOT, withGenesisTime} from "./scaleState.ts";

/** The genesis time of the blocks' chain (their roots depend on it): the nodes run on a clock shifted to it. */
export const SYNC_GENESIS_TIME = 1_750_000_000;

/** BLS12-381's group order r: secret keys are scalars mod r. */
const CURVE_ORDER = 0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001n;

/**
 * The SSZ SignedBeaconBlocks of slots 1..`count` on `state` (the scale state's bytes), from the
 * kept file under `prefix` if one has as many, else made and kept. Needs LODESTAR_PRESET=mainnet.
 */
export async function syncBlocks(o: {state: Uint8Array; count: number; prefix: string; log: (line: string) => void}): Promise<Uint8Array[]> {
  const kept = findCache(o.prefix, o.count);
  if (kept) {
    o.log(`${o.count} blocks from ${kept}`);
    return readCache(kept, o.count).map((r) => new Uint8Array(uncompressSync(Buffer.from(r.data)) as Buffer));
  }
  const file = cacheFile(o.prefix, o.count);
  o.log(`making ${o.count} blocks (128 full aggregates and a full sync aggregate each), kept as ${file}`);
  const writer = new CacheWriter(file);
  const blocks: Uint8Array[] = [];
  await generate(o.state, o.count, (bytes, slot, ms) => {
    const record: GossipRecord = {kind: "beacon_block", subnet: 0, slot, atMs: 0, data: new Uint8Array(compressSync(Buffer.from(bytes))), sets: []};
    writer.write([record]);
    blocks.push(bytes);
    o.log(`  block ${slot}: ${(bytes.length / 1024).toFixed(0)} KiB in ${(ms / 1000).toFixed(1)} s`);
  });
  writer.close();
  return blocks;
}

async function generate(stateBytes: Uint8Array, count: number, onBlock: (bytes: Uint8Array, slot: number, ms: number) => void): Promise<void> {
  const params = await import("@lodestar/params");
  const st = await import("@lodestar/state-transition");
  const {computeEpochAtSlot, computeSigningRoot, computeStartSlotAtEpoch, getBlockRootAtSlot, interopSecretKey} = st;
  const {ssz} = await import("@lodestar/types");
  const {BitArray} = await import("@chainsafe/ssz");
  const {SecretKey} = await import("@chainsafe/blst");
  const {devChainConfig} = await import("../src/config/chainConfig.ts");
  const {genesisStateFromBytes} = await import("../src/chain/genesis.ts");
  const {MockExecutionEngine} = await import("../src/execution/mockEngine.ts");
  const {payloadAttributes} = await import("../src/chain/payloadAttributes.ts");
  const {TRUSTED_TRANSITION} = await import("../src/chain/regen.ts");

  const chainConfig = devChainConfig({secondsPerSlot: SCALE_SECONDS_PER_SLOT, genesisFork: "bellatrix", forkEpochs: {}});
  let state = genesisStateFromBytes(chainConfig, withGenesisTime(stateBytes, SYNC_GENESIS_TIME)) as import("@lodestar/state-transition").CachedBeaconStateBellatrix;
  const config = state.config;
  const engine = new MockExecutionEngine();

  const scalar = (index: number): bigint => BigInt(`0x${Buffer.from(interopSecretKey(index).toBytes()).toString("hex")}`);
  /** The key whose signature is the aggregate of the signatures of `indices` (one per position, repeats included). */
  const summedKey = (indices: ArrayLike<number>) => {
    let sum = 0n;
    for (let i = 0; i < indices.length; i++) sum = (sum + scalar(indices[i])) % CURVE_ORDER;
    return SecretKey.fromBytes(Buffer.from(sum.toString(16).padStart(64, "0"), "hex"));
  };
  const sign = (index: number, root: Uint8Array) => interopSecretKey(index).sign(root).toBytes();
  /** the full aggregates of each slot's committees, made once (a slot's are in two blocks) */
  const fullAggregates = new Map<number, unknown[]>();

  for (let slot = 1; slot <= count; slot++) {
    const started = Date.now();
    const pre = st.processSlots(state, slot) as typeof state;
    const epoch = computeEpochAtSlot(slot);
    const parentRoot = getBlockRootAtSlot(pre, slot - 1);

    const attestations: unknown[] = [];
    for (const t of [slot - 1, slot - 2]) {
      if (t < 0) continue;
      if (!fullAggregates.has(t)) {
        const targetEpoch = computeEpochAtSlot(t);
        const source = (targetEpoch === pre.epochCtx.epoch ? pre.currentJustifiedCheckpoint : pre.previousJustifiedCheckpoint).toValue();
        const target = {epoch: targetEpoch, root: getBlockRootAtSlot(pre, computeStartSlotAtEpoch(targetEpoch))};
        const domain = config.getDomain(t, params.DOMAIN_BEACON_ATTESTER);
        const made: unknown[] = [];
        for (let index = 0; index < pre.epochCtx.getCommitteeCountPerSlot(targetEpoch); index++) {
          const committee = pre.epochCtx.getBeaconCommittee(t, index);
          const data = {slot: t, index, beaconBlockRoot: getBlockRootAtSlot(pre, t), source, target};
          const signature = summedKey(committee).sign(computeSigningRoot(ssz.phase0.AttestationData, data, domain)).toBytes();
          made.push({aggregationBits: BitArray.fromBoolArray(Array.from({length: committee.length}, () => true)), data, signature});
        }
        fullAggregates.set(t, made);
      }
      attestations.push(...fullAggregates.get(t)!);
    }
    fullAggregates.delete(slot - 2);

    // every member of the sync committee signs the parent block (the previous slot's head)
    const members = pre.epochCtx.currentSyncCommitteeIndexed.validatorIndices;
    const syncRoot = computeSigningRoot(ssz.Root, parentRoot, config.getDomain(slot, params.DOMAIN_SYNC_COMMITTEE, slot - 1));
    const syncAggregate = {
      syncCommitteeBits: BitArray.fromBoolArray(Array.from({length: params.SYNC_COMMITTEE_SIZE}, () => true)),
      syncCommitteeSignature: summedKey(members).sign(syncRoot).toBytes(),
    };

    const proposerIndex = pre.epochCtx.getBeaconProposer(slot);
    const header = pre.latestExecutionPayloadHeader;
    const attributes = payloadAttributes(config, pre, parentRoot, new Uint8Array(20));
    const {payload} = await engine.buildPayload("bellatrix", {blockHash: header.blockHash, blockNumber: header.blockNumber, gasLimit: header.gasLimit}, attributes);
    const body = {
      randaoReveal: sign(proposerIndex, computeSigningRoot(ssz.Epoch, epoch, config.getDomain(slot, params.DOMAIN_RANDAO))),
      eth1Data: pre.eth1Data.toValue(),
      graffiti: new Uint8Array(32),
      proposerSlashings: [],
      attesterSlashings: [],
      attestations,
      deposits: [],
      voluntaryExits: [],
      syncAggregate,
      executionPayload: payload,
    };
    const block = {slot, proposerIndex, parentRoot, stateRoot: new Uint8Array(32), body} as unknown as import("@lodestar/types").bellatrix.BeaconBlock;
    const post = st.stateTransition(pre, {message: block, signature: new Uint8Array(96)} as never, TRUSTED_TRANSITION) as typeof state;
    block.stateRoot = post.hashTreeRoot();
    const signature = sign(proposerIndex, computeSigningRoot(ssz.bellatrix.BeaconBlock, block, config.getDomain(slot, params.DOMAIN_BEACON_PROPOSER)));
    onBlock(ssz.bellatrix.SignedBeaconBlock.serialize({message: block, signature}), slot, Date.now() - started);
    state = post;
  }
}

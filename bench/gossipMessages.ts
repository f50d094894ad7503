// What mainnet gossip carries in a slot, for `bench:gossip`, on the scale state (bench/scaleState.ts):
// made once in this process by a chain of the node's own code driven slot by slot (a fixed
// genesis time, a clock moved by hand, as bench/drivenChain.ts does), every message signed with
// its validator's interop key, and kept on disk (bench/gossipCache.ts). Per slot:
//
// - at its start, the slot's block (produced by the chain from its pools: the previous slot's
//   attestations of every committee, and its sync committee's signatures);
// - from 4 s, the single attestation of every member of the slot's committees (all of them: with
//   1M validators, 64 committees of 488), on its subnet, most of them in the first second, a
//   tail until 8 s; and the sync committee's messages, each on every subnet its validator sits in;
// - from 8 s, the aggregates of every validator its selection proof makes an aggregator (about
//   16 a committee), and the sync committee contributions of theirs (about 16 a subcommittee).
//   Each aggregator aggregates what it saw: every message of its committee but a random 5% (its
//   own always), drawn again in the rare case where it holds or is held by another aggregate of
//   the committee: the node must check each one (an aggregate whose bits a seen one already
//   holds is ignored unchecked), so every message sent is one the node must accept.
//
// The chain under the generator trusts signatures (it signs them itself): the node that receives
// the messages checks every one.
import {mkdtempSync, rmSync} from "node:fs";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {aggregateSignatures, type Signature} from "@chainsafe/blst";
import type {phase0} from "@lodestar/types";
import {compressSync} from "snappy";
import type {GossipRecord, SignatureSetBytes} from "./gossipCache.ts";
import {CacheWriter, cacheFile, findCache, readCache} from "./gossipCache.ts";
import {prng} from "./seededRandom.ts";
import {SCALE_SECONDS_PER_SLOT, withGenesisTime} from "./scaleState.ts";

/** The genesis time of the chain the messages belong to (their roots depend on it): the node runs on a clock shifted to it. */
export const GOSSIP_GENESIS_TIME = 1_750_000_000;

/**
 * The messages of slots 1..`slots` on `state` (the scale state's bytes), from the kept file under
 * `prefix` if one has as many slots, else made and kept. Needs LODESTAR_PRESET=mainnet.
 */
export async function gossipMessages(o: {state: Uint8Array; slots: number; prefix: string; log: (line: string) => void}): Promise<GossipRecord[]> {
  const kept = findCache(o.prefix, o.slots);
  if (kept) {
    o.log(`messages of ${o.slots} slots from ${kept}`);
    return readCache(kept, o.slots);
  }
  const file = cacheFile(o.prefix, o.slots);
  o.log(`making the messages of ${o.slots} slots (every one signed: about 65,000 signatures a slot at a million validators), kept as ${file}`);
  const writer = new CacheWriter(file);
  const records: GossipRecord[] = [];
  await generate(o.state, o.slots, (slotRecords, slot, ms) => {
    writer.write(slotRecords);
    records.push(...slotRecords);
    o.log(`  slot ${slot}: ${slotRecords.length} messages in ${(ms / 1000).toFixed(0)} s`);
  });
  writer.close();
  return records;
}

async function generate(stateBytes: Uint8Array, slots: number, onSlot: (records: GossipRecord[], slot: number, ms: number) => void): Promise<void> {
  const params = await import("@lodestar/params");
  const {SLOTS_PER_EPOCH, SYNC_COMMITTEE_SUBNET_SIZE, SYNC_COMMITTEE_SUBNET_COUNT} = params;
  const st = await import("@lodestar/state-transition");
  const {computeEpochAtSlot, computeSigningRoot, interopSecretKey, isAggregatorFromCommitteeLength, isSyncCommitteeAggregator} = st;
  const {ssz} = await import("@lodestar/types");
  const {BitArray} = await import("@chainsafe/ssz");
  const {initChain} = await import("../src/chain/init.ts");
  const {Clock} = await import("../src/clock/clock.ts");
  const {devChainConfig} = await import("../src/config/chainConfig.ts");
  const {BeaconDb} = await import("../src/db/beaconDb.ts");
  const {MockExecutionEngine} = await import("../src/execution/mockEngine.ts");
  const {serializeSet} = await import("../src/bls/verifier.ts");
  const {computeSubnetForAttestation} = await import("../src/network/subnets.ts");

  const config = devChainConfig({secondsPerSlot: SCALE_SECONDS_PER_SLOT, genesisFork: "bellatrix", forkEpochs: {}});
  const dir = mkdtempSync(join(tmpdir(), "bench-gossip-gen-"));
  const db = await BeaconDb.open(dir, config);
  let nowMs = GOSSIP_GENESIS_TIME * 1000;
  let clock: InstanceType<typeof Clock> | null = null;
  const chain = await initChain(
    config,
    db,
    new MockExecutionEngine(),
    (t) => (clock = new Clock(t, SCALE_SECONDS_PER_SLOT, SLOTS_PER_EPOCH, () => nowMs)),
    {validatorCount: 0, genesisTime: GOSSIP_GENESIS_TIME, genesisState: withGenesisTime(stateBytes, GOSSIP_GENESIS_TIME)},
    // the generator's own signatures: trusted here, checked by the node under test
    {graffiti: () => new Uint8Array(32), feeRecipientOf: () => new Uint8Array(20), verifier: {verify: async () => true}}
  );
  const cfg = chain.config;
  const slotStartMs = (slot: number) => (GOSSIP_GENESIS_TIME + slot * SCALE_SECONDS_PER_SLOT) * 1000;
  const wire = (bytes: Uint8Array) => new Uint8Array(compressSync(Buffer.from(bytes)));
  const keys = new Map<number, ReturnType<typeof interopSecretKey>>();
  const key = (index: number) => {
    let sk = keys.get(index);
    if (!sk) keys.set(index, (sk = interopSecretKey(index)));
    return sk;
  };
  const signature = (index: number, root: Uint8Array) => key(index).sign(root);
  const sign = (index: number, root: Uint8Array) => signature(index, root).toBytes();
  /**
   * What an aggregator saw: all but a random 5% of the messages, its own always, neither holding
   * nor held by any of `others` (the other aggregates of its committee so far, to which it is added).
   */
  const seen = (count: number, own: (i: number) => boolean, random: () => number, others: boolean[][]): boolean[] => {
    const holds = (a: boolean[], b: boolean[]) => b.every((bit, i) => !bit || a[i]);
    for (;;) {
      const mask = Array.from({length: count}, (_, i) => own(i) || random() >= 0.05);
      if (others.some((other) => holds(other, mask) || holds(mask, other))) continue;
      others.push(mask);
      return mask;
    }
  };

  try {
    for (let slot = 1; slot <= slots; slot++) {
      const started = Date.now();
      const random = prng(slot);
      const records: GossipRecord[] = [];
      const epoch = computeEpochAtSlot(slot);
      nowMs = slotStartMs(slot);
      clock!.emit("slot", slot);
      if (slot % SLOTS_PER_EPOCH === 0) clock!.emit("epoch", epoch);
      const state = await chain.getHeadStateAtEpoch(epoch);
      const cache = state.epochCtx.pubkeyCache;
      const setOf = (indices: number[], root: Uint8Array, sig: Uint8Array): SignatureSetBytes =>
        serializeSet(indices.length === 1 ? st.createIndexedSignatureSetFromComponents(indices[0], root, sig) : st.createAggregateSignatureSetFromComponents(indices, root, sig), cache);

      // the block, with the previous slot's aggregates and sync committee signatures
      const proposer = state.epochCtx.getBeaconProposer(slot);
      const randaoRoot = computeSigningRoot(ssz.Epoch, epoch, cfg.getDomain(slot, params.DOMAIN_RANDAO));
      const randaoReveal = sign(proposer, randaoRoot);
      const parentRoot = chain.getHead().blockRoot;
      const {block} = await chain.produceBlock({slot, randaoReveal});
      const body = block.body as {attestations: Array<{aggregationBits: {getTrueBitIndexes(): number[]}; data: {slot: number; index: number}; signature: Uint8Array}>; syncAggregate: {syncCommitteeBits: {getTrueBitIndexes(): number[]}; syncCommitteeSignature: Uint8Array}};
      const blockRoot = computeSigningRoot(ssz.bellatrix.BeaconBlock, block as never, cfg.getDomain(slot, params.DOMAIN_BEACON_PROPOSER));
      const blockSignature = sign(proposer, blockRoot);
      const signed = {message: block, signature: blockSignature};
      const blockSets = [setOf([proposer], blockRoot, blockSignature), setOf([proposer], randaoRoot, randaoReveal)];
      for (const att of body.attestations) {
        const committee = state.epochCtx.getBeaconCommittee(att.data.slot, att.data.index);
        const root = computeSigningRoot(ssz.phase0.AttestationData, att.data as never, cfg.getDomain(att.data.slot, params.DOMAIN_BEACON_ATTESTER));
        blockSets.push(setOf(att.aggregationBits.getTrueBitIndexes().map((i) => committee[i]), root, att.signature));
      }
      const syncBits = body.syncAggregate.syncCommitteeBits.getTrueBitIndexes();
      if (syncBits.length > 0) {
        const members = state.epochCtx.getIndexedSyncCommittee(slot).validatorIndices;
        const root = computeSigningRoot(ssz.Root, parentRoot, cfg.getDomain(slot - 1, params.DOMAIN_SYNC_COMMITTEE, slot - 1));
        blockSets.push(setOf(syncBits.map((i) => members[i]), root, body.syncAggregate.syncCommitteeSignature));
      }
      records.push({kind: "beacon_block", subnet: 0, slot, atMs: 0, data: wire(ssz.bellatrix.SignedBeaconBlock.serialize(signed as never)), sets: blockSets});
      await chain.importBlock(signed as never);
      const headRoot = chain.getHead().blockRoot;

      // from a third of the slot: every committee member's attestation, most within a second
      nowMs = slotStartMs(slot) + (SCALE_SECONDS_PER_SLOT * 1000) / 3;
      const attestAt = () => 4000 + Math.floor(random() ** 3 * 4000);
      const committees = state.epochCtx.getCommitteeCountPerSlot(epoch);
      const byCommittee: Array<{data: phase0.AttestationData; root: Uint8Array; members: Uint32Array; signatures: Signature[]}> = [];
      for (let index = 0; index < committees; index++) {
        const data = await chain.produceAttestationData(index, slot);
        const root = computeSigningRoot(ssz.phase0.AttestationData, data, cfg.getDomain(slot, params.DOMAIN_BEACON_ATTESTER));
        const members = state.epochCtx.getBeaconCommittee(slot, index);
        const signatures: Signature[] = [];
        byCommittee.push({data, root, members, signatures});
        const subnet = computeSubnetForAttestation(committees, slot, index);
        for (let position = 0; position < members.length; position++) {
          const aggregationBits = BitArray.fromBitLen(members.length);
          aggregationBits.set(position, true);
          signatures.push(signature(members[position], root));
          const att = {aggregationBits, data, signature: signatures[position].toBytes()};
          await chain.pools.attestations.submitAttestation(att);
          records.push({kind: "beacon_attestation", subnet, slot, atMs: attestAt(), data: wire(ssz.phase0.Attestation.serialize(att)), sets: [setOf([members[position]], root, att.signature)]});
        }
      }
      // the sync committee's messages on the new head, each on every subnet of its validator
      const syncCommittee = state.epochCtx.getIndexedSyncCommittee(slot);
      const syncRoot = computeSigningRoot(ssz.Root, headRoot, cfg.getDomain(slot, params.DOMAIN_SYNC_COMMITTEE, slot));
      const syncSignatures = new Map<number, Signature>();
      for (const [validatorIndex, positions] of syncCommittee.validatorIndexMap) {
        syncSignatures.set(validatorIndex, signature(validatorIndex, syncRoot));
        const msg = {slot, beaconBlockRoot: headRoot, validatorIndex, signature: syncSignatures.get(validatorIndex)!.toBytes()};
        await chain.pools.syncCommittee.submitSyncCommitteeMessage(msg);
        const data = wire(ssz.altair.SyncCommitteeMessage.serialize(msg));
        const at = attestAt();
        for (const subnet of new Set(positions.map((p) => Math.floor(p / SYNC_COMMITTEE_SUBNET_SIZE)))) {
          records.push({kind: "sync_committee", subnet, slot, atMs: at, data, sets: [setOf([validatorIndex], syncRoot, msg.signature)]});
        }
      }

      // from two thirds: the aggregators' aggregates and contributions
      nowMs = slotStartMs(slot) + (SCALE_SECONDS_PER_SLOT * 2000) / 3;
      const aggregateAt = () => 8000 + Math.floor(random() ** 2 * 2000);
      const selectionRoot = computeSigningRoot(ssz.Slot, slot, cfg.getDomain(slot, params.DOMAIN_SELECTION_PROOF));
      for (const {data, root, members, signatures} of byCommittee) {
        const masks: boolean[][] = [];
        for (let position = 0; position < members.length; position++) {
          const aggregatorIndex = members[position];
          const selectionProof = sign(aggregatorIndex, selectionRoot);
          if (!isAggregatorFromCommitteeLength(members.length, selectionProof)) continue;
          const included = seen(members.length, (i) => i === position, random, masks);
          const aggregationBits = BitArray.fromBoolArray(included);
          const aggregateSignature = aggregateSignatures(signatures.filter((_, i) => included[i])).toBytes();
          const aggregate = {aggregationBits, data, signature: aggregateSignature};
          const message = {aggregatorIndex, aggregate, selectionProof};
          const proofRoot = computeSigningRoot(ssz.phase0.AggregateAndProof, message, cfg.getDomain(slot, params.DOMAIN_AGGREGATE_AND_PROOF));
          const signedAggregate = {message, signature: sign(aggregatorIndex, proofRoot)};
          const participants = [...members].filter((_, i) => included[i]);
          records.push({
            kind: "beacon_aggregate_and_proof",
            subnet: 0,
            slot,
            atMs: aggregateAt(),
            data: wire(ssz.phase0.SignedAggregateAndProof.serialize(signedAggregate)),
            sets: [setOf([aggregatorIndex], selectionRoot, selectionProof), setOf([aggregatorIndex], proofRoot, signedAggregate.signature), setOf(participants, root, aggregateSignature)],
          });
        }
      }
      for (let subcommitteeIndex = 0; subcommitteeIndex < SYNC_COMMITTEE_SUBNET_COUNT; subcommitteeIndex++) {
        const start = subcommitteeIndex * SYNC_COMMITTEE_SUBNET_SIZE;
        const subcommittee = syncCommittee.validatorIndices.subarray(start, start + SYNC_COMMITTEE_SUBNET_SIZE);
        const selectionRootSync = computeSigningRoot(ssz.altair.SyncAggregatorSelectionData, {slot, subcommitteeIndex}, cfg.getDomain(slot, params.DOMAIN_SYNC_COMMITTEE_SELECTION_PROOF, slot));
        const masks: boolean[][] = [];
        for (const aggregatorIndex of new Set(subcommittee)) {
          const selectionProof = sign(aggregatorIndex, selectionRootSync);
          if (!isSyncCommitteeAggregator(selectionProof)) continue;
          // a validator sitting k times in the subcommittee: k bits, its signature k times
          const included = seen(subcommittee.length, (i) => subcommittee[i] === aggregatorIndex, random, masks);
          const participants = [...subcommittee].filter((_, i) => included[i]);
          const contribution = {
            slot,
            beaconBlockRoot: headRoot,
            subcommitteeIndex,
            aggregationBits: BitArray.fromBoolArray(included),
            signature: aggregateSignatures(participants.map((v) => syncSignatures.get(v)!)).toBytes(),
          };
          const message = {aggregatorIndex, contribution, selectionProof};
          const proofRoot = computeSigningRoot(ssz.altair.ContributionAndProof, message, cfg.getDomain(slot, params.DOMAIN_CONTRIBUTION_AND_PROOF, slot));
          const signedContribution = {message, signature: sign(aggregatorIndex, proofRoot)};
          records.push({
            kind: "sync_committee_contribution_and_proof",
            subnet: 0,
            slot,
            atMs: aggregateAt(),
            data: wire(ssz.altair.SignedContributionAndProof.serialize(signedContribution)),
            sets: [setOf([aggregatorIndex], selectionRootSync, selectionProof), setOf([aggregatorIndex], proofRoot, signedContribution.signature), setOf(participants, syncRoot, contribution.signature)],
          });
        }
      }
      // the keys of this slot's attesters are not used again within the epoch
      keys.clear();
      onSlot(records, slot, Date.now() - started);
    }
  } finally {
    await chain.close();
    await db.close();
    rmSync(dir, {recursive: true, force: true});
  }
}

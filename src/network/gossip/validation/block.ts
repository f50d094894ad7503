import {ForkSeq} from "@lodestar/params";
import {computeEpochAtSlot, computeStartSlotAtEpoch, getBlockProposerSignatureSet} from "@lodestar/state-transition";
import type {SignedBeaconBlock, bellatrix, deneb} from "@lodestar/types";
import {toRootHex} from "@lodestar/utils";
import {parentImportOutcome} from "./outcomes.ts";
import {SeenBySlot} from "./seenCache.ts";
import {latestCurrentSlot} from "./timing.ts";
import {type GossipValidatorDeps, type GossipValidatorFn, accept, ignore, reject} from "./types.ts";

/** Slots of proposers seen kept beyond the finalized slot at most (a long non-finality). */
const MAX_SEEN_PROPOSER_SLOTS = 1024;

/**
 * beacon_block (phase0 p2p-interface.md, with the bellatrix payload timestamp and the deneb,
 * electra and fulu blob commitment limits). A block that passes the gossip rules is ACCEPTed,
 * and so forwarded, before it is imported, as the spec's rules intend: the rest of its validity
 * (every other signature, the payload, the state transition, its data) is decided by the import
 * that follows, which reports the sender of a block it finds invalid.
 */
export function createBlockValidator(deps: GossipValidatorDeps): GossipValidatorFn {
  const {config, chain} = deps;
  const seenProposers = new SeenBySlot(MAX_SEEN_PROPOSER_SLOTS);

  return async (topic, message, from) => {
    const signed = message as SignedBeaconBlock;
    const block = signed.message;
    const {slot, proposerIndex} = block;
    const fork = config.getForkName(slot);
    if (fork !== topic.boundary.fork) return reject(`a ${fork} block (slot ${slot}) on a ${topic.boundary.fork} topic`);

    if (slot > latestCurrentSlot(deps)) {
      deps.onFutureBlock?.(signed, from);
      return ignore(`block slot ${slot} is in the future (current slot ${deps.clock.currentSlot()})`);
    }
    const finalized = chain.forkChoice.getFinalizedCheckpoint();
    const finalizedSlot = computeStartSlotAtEpoch(finalized.epoch);
    seenProposers.prune(finalizedSlot + 1);
    if (slot <= finalizedSlot) return ignore(`block slot ${slot} is not after the finalized slot ${finalizedSlot}`);
    if (seenProposers.has(slot, String(proposerIndex))) return ignore(`a valid block of proposer ${proposerIndex} at slot ${slot} was seen already`);
    const blockRootHex = toRootHex(config.getForkTypes(slot).BeaconBlock.hashTreeRoot(block));
    if (chain.forkChoice.hasBlock(blockRootHex)) return ignore(`block ${blockRootHex} is already known`);

    if (ForkSeq[fork] >= ForkSeq.deneb) {
      const commitments = (block as deneb.BeaconBlock).body.blobKzgCommitments.length;
      const max = config.getMaxBlobsPerBlock(computeEpochAtSlot(slot));
      if (commitments > max) return reject(`block has ${commitments} blob KZG commitments, more than ${max}`);
    }

    const {pubkeyCache} = chain.getHeadState().epochCtx;
    if (!pubkeyCache.get(proposerIndex)) return ignore(`proposer ${proposerIndex} is not a known validator`);
    if (!(await chain.verifier.verify([getBlockProposerSignatureSet(config, signed)], pubkeyCache, {priority: true}))) {
      return reject(`invalid proposer signature (proposer ${proposerIndex}, slot ${slot})`);
    }
    // another block of this proposer may have passed while the signature was checked
    if (seenProposers.has(slot, String(proposerIndex))) return ignore(`a valid block of proposer ${proposerIndex} at slot ${slot} was seen already`);
    seenProposers.add(slot, String(proposerIndex));

    const parentHex = toRootHex(block.parentRoot);
    let parent = chain.forkChoice.getBlock(parentHex);
    if (!parent) {
      // a parent that passed gossip validation and is importing: this block goes on once it is known
      const parentImport = chain.pendingChildren.waitForParent(parentHex);
      if (!parentImport) return ignore(`parent ${parentHex} is unknown`, {parentUnknown: true, unknownBlockRoot: parentHex});
      const outcome = await parentImport;
      parent = chain.forkChoice.getBlock(parentHex);
      if (!parent) return parentImportOutcome(outcome, parentHex);
    }
    if (parent.slot >= slot) return reject(`block slot ${slot} is not after its parent's ${parent.slot}`);
    if (chain.forkChoice.getAncestor(parentHex, finalizedSlot) !== finalized.root) {
      return reject(`block does not descend from the finalized checkpoint ${finalized.root}`);
    }

    if (ForkSeq[fork] >= ForkSeq.bellatrix) {
      const payload = (block as bellatrix.BeaconBlock).body.executionPayload;
      const executionEnabled = ForkSeq[fork] >= ForkSeq.capella || parent.executionBlockHash !== null || payload.blockHash.some((b) => b !== 0);
      const expected = chain.genesisTime + slot * config.SECONDS_PER_SLOT;
      if (executionEnabled && payload.timestamp !== expected) {
        return reject(`execution payload timestamp ${payload.timestamp} is not the slot's time ${expected}`);
      }
    }

    const preState = await chain.getBlockPreState(block).catch(() => null);
    if (!preState) return ignore(`no state to compute the proposer of slot ${slot}`);
    const expected = preState.epochCtx.getBeaconProposer(slot);
    if (proposerIndex !== expected) return reject(`proposer ${proposerIndex} is not the proposer of slot ${slot} (${expected})`);

    deps.importBlock(signed, from);
    return accept(`block ${blockRootHex} at slot ${slot}`);
  };
}

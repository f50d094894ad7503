import {computeEpochAtSlot} from "@lodestar/state-transition";
import type {SignedBlindedBeaconBlock, Slot} from "@lodestar/types";
import {toHex} from "@lodestar/utils";
import type {ProposerDuty} from "./beaconApi.ts";
import type {BuilderModeOptions} from "./builderMode.ts";
import {errorMessage, forEachSettled, publishDuties, type ValidatorContext} from "./context.ts";

interface EpochProposers {
  epoch: number;
  dependentRoot: string;
  duties: ProposerDuty[];
}

/**
 * Block proposals. Proposer duties are fetched at every slot start for the slot's epoch (one
 * cheap call), so a new epoch or a changed dependent root (a re-org of the block the
 * shuffling depends on) is picked up before the slot's proposal; if the call fails the
 * duties fetched earlier for the same epoch are used.
 */
export class ProposerService {
  private readonly ctx: ValidatorContext;
  private readonly graffiti: (pubkey: Uint8Array) => Uint8Array | undefined;
  private current: EpochProposers | null = null;

  /** builder mode: the `builder_boost_factor` of block requests (undefined: the node's own) */
  private readonly builderBoostFactor: bigint | undefined;

  /** `graffiti`: asked for each proposal, by the proposer's key */
  constructor(ctx: ValidatorContext, graffiti?: (pubkey: Uint8Array) => Uint8Array | undefined, builder?: BuilderModeOptions) {
    this.ctx = ctx;
    this.graffiti = graffiti ?? (() => undefined);
    this.builderBoostFactor = builder?.boostFactor;
  }

  /** At the start of `slot`: refresh the epoch's duties and propose for any of ours at `slot`. */
  async onSlotStart(slot: Slot): Promise<void> {
    if (slot === 0) return; // the genesis block is slot 0's block
    const duties = await this.dutiesAt(computeEpochAtSlot(slot));
    const ours = duties.filter((d) => d.slot === slot && this.ctx.validators.owns(d.pubkey, d.validatorIndex));
    await forEachSettled(
      ours,
      (duty) => publishDuties(this.ctx, "block_proposal", 1, 1, () => this.propose(duty)),
      (duty, err) => this.ctx.log.error({slot, validatorIndex: duty.validatorIndex, error: errorMessage(err)}, "Block proposal failed")
    );
  }

  private async dutiesAt(epoch: number): Promise<ProposerDuty[]> {
    const {api, log, validators} = this.ctx;
    if (validators.indices.length === 0) return [];
    try {
      const {dependentRoot, duties} = await api.getProposerDuties(epoch);
      const root = toHex(dependentRoot);
      const previous = this.current;
      if (previous?.epoch === epoch && previous.dependentRoot !== root) {
        log.info({epoch, previous: previous.dependentRoot, dependentRoot: root}, "Proposer duties changed with their dependent root");
      }
      this.current = {epoch, dependentRoot: root, duties};
      return duties;
    } catch (err) {
      log.error({epoch, error: errorMessage(err)}, "Failed to fetch proposer duties");
      return this.current?.epoch === epoch ? this.current.duties : [];
    }
  }

  private async propose(duty: ProposerDuty): Promise<void> {
    const {api, config, signer, log} = this.ctx;
    const {slot, validatorIndex, pubkey} = duty;
    const randaoReveal = await signer.signRandaoReveal(pubkey, computeEpochAtSlot(slot));
    const {block, fork, blobs, blinded} = await api.produceBlock(slot, randaoReveal, this.graffiti(pubkey), this.builderBoostFactor);
    if (block.slot !== slot || block.proposerIndex !== validatorIndex) {
      throw new Error(`beacon node returned a block for slot ${block.slot} proposer ${block.proposerIndex}`);
    }
    const expectedFork = config.getForkName(slot);
    if (fork !== expectedFork) throw new Error(`beacon node returned a ${fork} block; slot ${slot} is in ${expectedFork}`);
    const signed = await signer.signBlock(pubkey, block);
    if (blinded) {
      if (!api.publishBlindedBlock) throw new Error("the beacon node answered a blinded block, which this client cannot publish");
      await api.publishBlindedBlock(signed as unknown as SignedBlindedBeaconBlock, fork);
      log.info({slot, validatorIndex, fork}, "Published blinded block (builder payload)");
      return;
    }
    await api.publishBlock(signed, fork, blobs);
    log.info({slot, validatorIndex, fork}, "Published block");
  }
}

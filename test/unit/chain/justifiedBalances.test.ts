import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {DOMAIN_BEACON_PROPOSER, EFFECTIVE_BALANCE_INCREMENT, MAX_EFFECTIVE_BALANCE} from "@lodestar/params";
import {computeSigningRoot} from "@lodestar/state-transition";
import {ssz, type phase0} from "@lodestar/types";
import {toRootHex} from "@lodestar/utils";
import type {StateCache} from "../../../src/chain/stateCache.ts";
import {type ChainEnv, createChainEnv} from "../network/gossip/validation/chainEnv.ts";

const VALIDATORS = 64;
const SLASHED = 5;

/**
 * Fork choice weighs votes with the balances of the justified checkpoint's state
 * (fork-choice.md get_weight), even when that state has left the state cache: it is regenerated,
 * not replaced by the head state's. Every validator attests to block J (slot 8, epoch 1); block 16
 * carries those votes, so it justifies J, and a proposer slashing of validator 5. At the start of
 * epoch 3 J becomes the justified checkpoint, its state long evicted from a small cache: in J's
 * state validator 5 is unslashed and counts (32 increments), in the head state it is slashed (0).
 */
describe("fork choice weights use the justified checkpoint state's balances", () => {
  let env: ChainEnv;
  let jRoot: string;

  const stateCacheOf = (e: ChainEnv) => (e.chain as unknown as {stateCache: StateCache}).stateCache;

  function proposerSlashing(validator: number, slot: number): phase0.ProposerSlashing {
    const domain = env.config.getDomain(slot, DOMAIN_BEACON_PROPOSER);
    const header = (stateRoot: number) => {
      const message = {slot: BigInt(slot), proposerIndex: validator, parentRoot: new Uint8Array(32), stateRoot: new Uint8Array(32).fill(stateRoot), bodyRoot: new Uint8Array(32)};
      return {message, signature: env.sign(validator, computeSigningRoot(ssz.phase0.BeaconBlockHeaderBigint, message, domain))};
    };
    return {signedHeader1: header(1), signedHeader2: header(2)};
  }

  beforeAll(async () => {
    // room for a few states besides the pinned ones: J's own leaves before epoch 3
    env = await createChainEnv("fulu", {}, {stateCacheBytes: 320 * 1024});
    env.setTime(8, 100);
    jRoot = toRootHex((await env.chain.importBlock(await env.produceBlock(8))).blockRoot);
    for (let slot = 8; slot < 16; slot++) {
      env.setTime(slot, 1000);
      const data = await env.attestationData(slot);
      const epochCtx = (await env.chain.getHeadStateAtEpoch(1)).epochCtx;
      for (let index = 0; index < epochCtx.getCommitteeCountPerSlot(1); index++) {
        for (const member of epochCtx.getBeaconCommittee(slot, index)) {
          await env.chain.pools.attestations.submitAttestation({committeeIndex: index, attesterIndex: member, data, signature: env.signAttestation(data, member)});
        }
      }
    }
    await env.chain.pools.opPool.submitProposerSlashing(proposerSlashing(SLASHED, 3));
    for (const slot of [16, 17, 18]) {
      env.setTime(slot, 100);
      await env.chain.importBlock(await env.produceBlock(slot));
    }
  }, 60_000);
  afterAll(() => env?.close());

  it("J is justified at epoch 3 and weighs every validator's vote, the slashed one's included", async () => {
    const head = env.chain.getHeadState();
    expect(head.validators.getReadonly(SLASHED).slashed).toBe(true);
    expect(toRootHex(env.chain.getJustifiedCheckpoint().root)).not.toBe(jRoot);
    // the precondition of the fault: J's checkpoint state is not cached when J becomes justified
    expect(stateCacheOf(env).has(jRoot)).toBe(false);
    expect(stateCacheOf(env).has(`${jRoot}@8`)).toBe(false);

    env.setTime(24, 3000);
    await env.produceBlock(24); // runs fork choice at the current slot: epoch 3 realizes J
    expect(env.chain.getJustifiedCheckpoint()).toEqual({epoch: 1, root: Buffer.from(jRoot.slice(2), "hex")});
    const jNode = env.chain.forkChoice.getAllNodes().find((n) => n.blockRoot === jRoot);
    // 64 interop validators of MAX_EFFECTIVE_BALANCE, every one of them active and unslashed in J's state
    expect(jNode?.weight).toBe(VALIDATORS * (MAX_EFFECTIVE_BALANCE / EFFECTIVE_BALANCE_INCREMENT));
  });
});

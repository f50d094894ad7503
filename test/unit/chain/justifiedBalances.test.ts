import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {DOMAIN_BEACON_PROPOSER, EFFECTIVE_BALANCE_INCREMENT, MAX_EFFECTIVE_BALANCE} from "@lodestar/params";
import {computeSigningRoot} from "@lodestar/state-transition";
import {ssz, type phase0} from "@lodestar/types";
import {toRootHex} from "@lodestar/utils";
import type {HeadStates} from "../../../src/chain/headStates.ts";
import {type ChainEnv, createChainEnv} from "../network/gossip/validation/chainEnv.ts";

/** one validator's weight: MAX_EFFECTIVE_BALANCE in increments (every interop validator has it) */
const VOTE = MAX_EFFECTIVE_BALANCE / EFFECTIVE_BALANCE_INCREMENT;

/**
 * Fork choice weighs votes with the balances of the justified checkpoint's state
 * (fork-choice.md get_weight), even when that state has left the state cache: it is regenerated,
 * not replaced by the head state's balances. Every validator attests to block J (slot 8, epoch
 * 1); block 16 carries those votes, so it justifies J once epoch 3 starts. Two branches grow on
 * 16: X (slot 17) slashes two validators, Y (slot 18, built by a second chain that never saw X)
 * does not; their RANDAO mixes, and so their epoch-4 shufflings, differ. Two validators vote X;
 * the two slashed ones and a third vote Y, in the last slot of epoch 2. In J's state nobody is
 * slashed: Y weighs 3 votes, X 2, and Y is the head. With the head's (X's) balances Y would weigh
 * 1 vote and X would stay the head.
 */
describe("fork choice weights use the justified checkpoint state's balances", () => {
  let node: ChainEnv;
  let other: ChainEnv;
  let jRoot: string;
  let xRoot: string;
  let yRoot: string;
  let yVoters: number[];

  const stateCacheOf = (e: ChainEnv) => (e.chain as unknown as {states: HeadStates}).states.cache;
  const weightOf = (root: string) => node.chain.forkChoice.getAllNodes().find((n) => n.blockRoot === root)?.weight;

  function proposerSlashing(validator: number, slot: number): phase0.ProposerSlashing {
    const domain = node.config.getDomain(slot, DOMAIN_BEACON_PROPOSER);
    const header = (stateRoot: number) => {
      const message = {slot: BigInt(slot), proposerIndex: validator, parentRoot: new Uint8Array(32), stateRoot: new Uint8Array(32).fill(stateRoot), bodyRoot: new Uint8Array(32)};
      return {message, signature: node.sign(validator, computeSigningRoot(ssz.phase0.BeaconBlockHeaderBigint, message, domain))};
    };
    return {signedHeader1: header(1), signedHeader2: header(2)};
  }

  async function committee(slot: number, index: number): Promise<number[]> {
    return Array.from((await node.chain.getHeadStateAtEpoch(Math.floor(slot / 8))).epochCtx.getBeaconCommittee(slot, index));
  }

  /** single attestations of `voters` (members of committee 0 at `slot`) with `data`, into the node's pool */
  async function vote(data: phase0.AttestationData, voters: number[]): Promise<void> {
    for (const voter of voters) {
      await node.chain.pools.attestations.submitAttestation({committeeIndex: 0, attesterIndex: voter, data, signature: node.signAttestation(data, voter)});
    }
  }

  beforeAll(async () => {
    // room for a few states besides the pinned ones: J's own leaves the cache before epoch 3
    [node, other] = await Promise.all([createChainEnv("fulu", {}, {stateCacheBytes: 320 * 1024}), createChainEnv("fulu")]);
    node.setTime(8, 100);
    const j = await node.produceBlock(8);
    jRoot = toRootHex((await node.chain.importBlock(j)).blockRoot);
    for (let slot = 8; slot < 16; slot++) {
      node.setTime(slot, 1000);
      const data = await node.attestationData(slot);
      for (const index of [0, 1]) {
        for (const member of await committee(slot, index)) {
          await node.chain.pools.attestations.submitAttestation({committeeIndex: index, attesterIndex: member, data, signature: node.signAttestation(data, member)});
        }
      }
    }
    node.setTime(16, 100);
    const b16 = await node.produceBlock(16);
    await node.chain.importBlock(b16);
    expect(b16.message.body.attestations.length).toBeGreaterThan(0);

    yVoters = (await committee(23, 0)).slice(0, 3);
    for (const slashed of yVoters.slice(0, 2)) await node.chain.pools.opPool.submitProposerSlashing(proposerSlashing(slashed, 3));
    node.setTime(17, 100);
    xRoot = toRootHex((await node.chain.importBlock(await node.produceBlock(17))).blockRoot);
    node.setTime(17, 1000);
    await vote(await node.attestationData(17), (await committee(17, 0)).slice(0, 2));

    other.setTime(18, 100);
    await other.chain.importBlock(j);
    await other.chain.importBlock(b16);
    const y = await other.produceBlock(18);
    await other.chain.importBlock(y);
    node.setTime(18, 1500); // late: no proposer boost
    yRoot = toRootHex((await node.chain.importBlock(y)).blockRoot);
    other.setTime(23, 1000);
    node.setTime(23, 1000);
    await vote(await other.attestationData(23), yVoters);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([node?.close(), other?.close()]);
  });

  it("at epoch 3, J justified and its state regenerated, the branch with more votes in J's state is the head", async () => {
    // before: X is the head (its two votes count from slot 18, Y's three only from slot 24), and
    // in X's state two of Y's voters are slashed
    expect(toRootHex(node.chain.getHead().blockRoot)).toBe(xRoot);
    const xState = node.chain.getHeadState();
    expect(yVoters.map((v) => xState.validators.getReadonly(v).slashed)).toEqual([true, true, false]);
    // the branches' shufflings of epoch 4 differ (RANDAO mixes at the end of epoch 2)
    const yState = (await node.chain.getStateByBlockRoot(Buffer.from(yRoot.slice(2), "hex")))!;
    expect(toRootHex(yState.randaoMixes.get(2))).not.toBe(toRootHex(xState.randaoMixes.get(2)));
    // the precondition of the fault: J's checkpoint state is not cached when J becomes justified
    expect(stateCacheOf(node).has(jRoot)).toBe(false);
    expect(stateCacheOf(node).has(`${jRoot}@8`)).toBe(false);

    node.setTime(24, 3000);
    await node.produceBlock(24); // runs fork choice at slot 24: epoch 3 realizes J, Y's votes count
    expect(toRootHex(node.chain.getJustifiedCheckpoint().root)).toBe(jRoot);
    expect(weightOf(yRoot)).toBe(3 * VOTE);
    expect(weightOf(xRoot)).toBe(2 * VOTE);
    expect(toRootHex(node.chain.getHead().blockRoot)).toBe(yRoot);
  });
});

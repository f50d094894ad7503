import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {BitArray} from "@chainsafe/ssz";
import {DOMAIN_BLS_TO_EXECUTION_CHANGE, SLOTS_PER_EPOCH} from "@lodestar/params";
import {computeDomain, computeSigningRoot, interopSecretKey} from "@lodestar/state-transition";
import {ssz, type capella, type phase0} from "@lodestar/types";
import {type ChainEnv, createChainEnv} from "./chainEnv.ts";

describe("gossip validation on a phase0 chain", () => {
  let env: ChainEnv;
  const SLOT = 2;

  beforeAll(async () => {
    env = await createChainEnv("phase0");
    env.setTime(1, 100);
    await env.chain.importBlock(await env.produceBlock(1));
  }, 60_000);
  afterAll(() => env.close());

  const state = () => env.chain.getHeadStateAtEpoch(0);
  async function attestation(slot: number, index: number, positions: number[]): Promise<phase0.Attestation> {
    const members = Array.from((await state()).epochCtx.getBeaconCommittee(slot, index));
    const data = await env.chain.produceAttestationData(index, slot);
    return {aggregationBits: BitArray.fromBoolArray(members.map((_, i) => positions.includes(i))), data, signature: env.signAttestation(data, members[positions[0]])};
  }
  const validate = (att: phase0.Attestation, subnet: number) => env.validators.beacon_attestation(env.topic("beacon_attestation", subnet), att, "peer");

  it("takes the subnet from data.index and ACCEPTs a single-bit Attestation on it", async () => {
    env.setTime(SLOT, 700);
    const committees = (await state()).epochCtx.getCommitteeCountPerSlot(0);
    expect(committees).toBeGreaterThan(1);
    const subnet = (committees * SLOT + 1) % 64;
    expect(await validate(await attestation(SLOT, 1, [0]), subnet - 1)).toMatchObject({result: "REJECT", reason: expect.stringMatching(`belongs to subnet ${subnet}`)});
    expect(await validate(await attestation(SLOT, 1, [0]), subnet)).toMatchObject({result: "ACCEPT"});
    expect(await validate(await attestation(SLOT, 1, [1, 2]), subnet)).toMatchObject({result: "REJECT", reason: expect.stringMatching(/exactly one aggregation bit set, has 2/)});
  });

  it("IGNOREs attestations older than ATTESTATION_PROPAGATION_SLOT_RANGE (no EIP-7045 before deneb)", async () => {
    const committees = (await state()).epochCtx.getCommitteeCountPerSlot(0);
    const att = await attestation(SLOT, 0, [1]);
    env.setTime(SLOT + 33, 600);
    expect(SLOT + 33).toBeGreaterThan(2 * SLOTS_PER_EPOCH); // beyond deneb's window too, so the phase0 rule is the one tested
    expect(await validate(att, (committees * SLOT) % 64)).toMatchObject({result: "IGNORE", reason: expect.stringMatching(/older than ATTESTATION_PROPAGATION_SLOT_RANGE/)});
  });

  it("IGNOREs BLS to execution changes before capella", async () => {
    const message = {validatorIndex: 3, fromBlsPubkey: interopSecretKey(3).toPublicKey().toBytes(), toExecutionAddress: new Uint8Array(20)};
    const domain = computeDomain(DOMAIN_BLS_TO_EXECUTION_CHANGE, env.config.GENESIS_FORK_VERSION, env.chain.genesisValidatorsRoot);
    const change: capella.SignedBLSToExecutionChange = {message, signature: env.sign(3, computeSigningRoot(ssz.capella.BLSToExecutionChange, message, domain))};
    expect(await env.validators.bls_to_execution_change(env.topic("bls_to_execution_change"), change, "peer")).toMatchObject({
      result: "IGNORE",
      reason: expect.stringMatching(/before capella/),
    });
  });
});

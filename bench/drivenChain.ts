// A dev chain run as fast as the machine allows, for the memory benchmark and its test slice: the
// slot clock is driven by hand (a fake `now`, its slot and epoch events emitted in order), and
// every slot the proposer's block is produced, signed and imported, and every member of the
// slot's committees attests through the attestation pool, so the chain justifies and finalizes
// as a live one does. Lodestar modules are imported lazily: the caller fixes the preset first.
import {mkdtempSync, rmSync} from "node:fs";
import {tmpdir} from "node:os";
import {join} from "node:path";
import type {BeaconBlock} from "@lodestar/types";
import type {BeaconChain} from "../src/chain/beaconChain.ts";

export interface DrivenChain {
  chain: BeaconChain;
  /** the slot's events, its block, then its attestations */
  runSlot(slot: number): Promise<void>;
  close(): Promise<void>;
}

export async function startDrivenChain(opts: {validators: number; secondsPerSlot: number}): Promise<DrivenChain> {
  const {DOMAIN_BEACON_ATTESTER, DOMAIN_BEACON_PROPOSER, DOMAIN_RANDAO, SLOTS_PER_EPOCH} = await import("@lodestar/params");
  const {computeEpochAtSlot, computeSigningRoot, interopSecretKey} = await import("@lodestar/state-transition");
  const {ssz} = await import("@lodestar/types");
  const {initChain} = await import("../src/chain/init.ts");
  const {Clock} = await import("../src/clock/clock.ts");
  const {devChainConfig} = await import("../src/config/chainConfig.ts");
  const {BeaconDb} = await import("../src/db/beaconDb.ts");
  const {MockExecutionEngine} = await import("../src/execution/mockEngine.ts");

  const {secondsPerSlot} = opts;
  const config = devChainConfig({secondsPerSlot, genesisFork: "fulu", forkEpochs: {}});
  const dir = mkdtempSync(join(tmpdir(), "driven-chain-"));
  const db = await BeaconDb.open(dir, config);
  const genesisTime = 1_700_000_000;
  let nowMs = genesisTime * 1000;
  let clock: InstanceType<typeof Clock> | null = null;
  const chain = await initChain(
    config,
    db,
    new MockExecutionEngine(),
    (t) => (clock = new Clock(t, secondsPerSlot, SLOTS_PER_EPOCH, () => nowMs)),
    {validatorCount: opts.validators, genesisTime},
    {graffiti: () => new Uint8Array(32), feeRecipientOf: () => new Uint8Array(20)}
  );
  const slotStartMs = (slot: number) => (genesisTime + slot * secondsPerSlot) * 1000;

  async function propose(slot: number): Promise<void> {
    const epoch = computeEpochAtSlot(slot);
    const proposer = (await chain.getHeadStateAtEpoch(epoch)).epochCtx.getBeaconProposer(slot);
    const key = interopSecretKey(proposer);
    const randaoReveal = key.sign(computeSigningRoot(ssz.Epoch, epoch, chain.config.getDomain(slot, DOMAIN_RANDAO))).toBytes();
    const {block} = await chain.produceBlock({slot, randaoReveal});
    const types = chain.config.getForkTypes(slot);
    const signature = key.sign(computeSigningRoot(types.BeaconBlock, block as never, chain.config.getDomain(slot, DOMAIN_BEACON_PROPOSER))).toBytes();
    await chain.importBlock({message: block as BeaconBlock, signature} as never);
  }

  async function attest(slot: number): Promise<void> {
    const state = await chain.getHeadStateAtEpoch(computeEpochAtSlot(slot));
    const committees = state.epochCtx.getCommitteeCountPerSlot(computeEpochAtSlot(slot));
    const data = await chain.produceAttestationData(0, slot);
    const signingRoot = computeSigningRoot(ssz.phase0.AttestationData, data, chain.config.getDomain(slot, DOMAIN_BEACON_ATTESTER));
    for (let committeeIndex = 0; committeeIndex < committees; committeeIndex++) {
      for (const attesterIndex of state.epochCtx.getBeaconCommittee(slot, committeeIndex)) {
        const signature = interopSecretKey(attesterIndex).sign(signingRoot).toBytes();
        await chain.pools.attestations.submitAttestation({committeeIndex, attesterIndex, data, signature});
      }
    }
  }

  return {
    chain,
    async runSlot(slot) {
      nowMs = slotStartMs(slot);
      clock!.emit("slot", slot);
      if (slot % SLOTS_PER_EPOCH === 0) clock!.emit("epoch", slot / SLOTS_PER_EPOCH);
      await propose(slot);
      nowMs = slotStartMs(slot) + (secondsPerSlot * 1000) / 3;
      await attest(slot);
    },
    async close() {
      await chain.close();
      await db.close();
      rmSync(dir, {recursive: true, force: true});
    },
  };
}

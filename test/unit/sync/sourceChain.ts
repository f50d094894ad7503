import {computeEpochAtSlot} from "@lodestar/state-transition";
import type {SignedBeaconBlock} from "@lodestar/types";
import {createChainEnv, SECONDS_PER_SLOT, type ChainEnv} from "../network/gossip/validation/chainEnv.ts";

/**
 * A real chain the sync tests take blocks from: `slots` consecutive blocks of its interop
 * proposers, each followed by the attestations of every committee member of its slot (packed
 * into the next block), so that fork choice weighs this chain and it justifies and finalizes.
 */
export async function createSourceChain(slots: number): Promise<{env: ChainEnv; blocks: SignedBeaconBlock[]}> {
  const env = await createChainEnv("fulu");
  const blocks: SignedBeaconBlock[] = [];
  for (let slot = 1; slot <= slots; slot++) {
    env.setTime(slot, 100);
    const block = await env.produceBlock(slot);
    await env.chain.importBlock(block);
    blocks.push(block);
    env.setTime(slot, (SECONDS_PER_SLOT * 1000) / 2);
    const data = await env.attestationData(slot);
    const epochCtx = (await env.chain.getHeadStateAtEpoch(computeEpochAtSlot(slot))).epochCtx;
    for (let index = 0; index < epochCtx.getCommitteeCountPerSlot(computeEpochAtSlot(slot)); index++) {
      for (const member of epochCtx.getBeaconCommittee(slot, index)) {
        await env.chain.pools.attestations.submitAttestation({committeeIndex: index, attesterIndex: member, data, signature: env.signAttestation(data, member)});
      }
    }
  }
  return {env, blocks};
}

/** A fresh chain on the same genesis (no blocks yet), its clock at `slot`. */
export async function createTargetChain(slot: number): Promise<ChainEnv> {
  const env = await createChainEnv("fulu");
  env.setTime(slot, 500);
  return env;
}

/** Rejects after `ms` unless `promise` settles first. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

import {describe, expect, it} from "@jest/globals";
import {computeEpochShuffling, computeProposerIndices, getActiveValidatorIndices, type CachedBeaconStateFulu} from "@lodestar/state-transition";
import {ForkSeq} from "@lodestar/params";
import {createInteropGenesisState} from "../../../src/chain/genesis.ts";
import {devChainConfig} from "../../../src/config/chainConfig.ts";

describe("interop genesis", () => {
  it("has every validator active, the real validators root in its config, and working committees", () => {
    const state = createInteropGenesisState(devChainConfig({secondsPerSlot: 2, genesisFork: "electra", forkEpochs: {}}), 64, 1000);
    expect(state.validators.length).toBe(64);
    expect(getActiveValidatorIndices(state, 0).length).toBe(64);
    expect(state.config.genesisValidatorsRoot).toEqual(state.genesisValidatorsRoot);
    expect(state.genesisValidatorsRoot.some((b) => b !== 0)).toBe(true);
    expect(state.epochCtx.getBeaconCommittee(1, 0).length).toBeGreaterThan(0);
    expect(state.epochCtx.currentSyncCommitteeIndexed.validatorIndices.length).toBe(32);
  });

  it("fills fulu's proposer lookahead as the spec's initialize_proposer_lookahead does", () => {
    const state = createInteropGenesisState(devChainConfig({secondsPerSlot: 2, genesisFork: "fulu", forkEpochs: {}}), 64, 1000) as CachedBeaconStateFulu;
    const expected: number[] = [];
    for (const epoch of [0, 1]) {
      expected.push(...computeProposerIndices(ForkSeq.fulu, state, computeEpochShuffling(state, getActiveValidatorIndices(state, epoch), epoch), epoch));
    }
    const lookahead = state.proposerLookahead.getAll();
    expect(lookahead).toEqual(expected);
    expect(new Set(lookahead).size).toBeGreaterThan(4);
    expect(state.epochCtx.getBeaconProposer(3)).toBe(lookahead[3]);
  });
});

import {generateEvents} from "../test/unit/forkchoice/diffGenerator.ts";
import {replay, type CheckpointRule, type ExplainedHead} from "../test/unit/forkchoice/differential.ts";
import {describeEvents, shrink} from "../test/unit/forkchoice/shrink.ts";

/**
 * `npm run diff:forkchoice`: our fork choice against Lodestar 1.5.1's proto-array and its whole
 * ForkChoice class (justified and finalized checkpoints after every event) on many seeded event
 * sequences (the suite runs 200 of them: test/unit/forkchoice/differential.test.ts). Stops
 * at the first disagreement and prints the smallest event sequence that shows it.
 *
 *   FC_DIFF_SEEDS (default 5000), FC_DIFF_FIRST_SEED (default 1), FC_DIFF_EVENTS (default 400)
 */

const seeds = Number(process.env.FC_DIFF_SEEDS ?? 5000);
const firstSeed = Number(process.env.FC_DIFF_FIRST_SEED ?? 1);
const length = Number(process.env.FC_DIFF_EVENTS ?? 400);

const totals = {events: 0, headsCompared: 0, headsNotComparable: 0, invalidated: 0, maxJustifiedEpoch: 0, maxFinalizedEpoch: 0};
const full = {checkpointsCompared: 0, headsCompared: 0};
const explained: Partial<Record<ExplainedHead, number>> = {};
const fullExplained: Partial<Record<ExplainedHead, number>> = {};
const checkpointRules: Partial<Record<CheckpointRule, number>> = {};
const add = <K extends string>(into: Partial<Record<K, number>>, from: Partial<Record<K, number>>) => {
  for (const [key, count] of Object.entries(from) as Array<[K, number]>) into[key] = (into[key] ?? 0) + count;
};
const started = Date.now();
for (let seed = firstSeed; seed < firstSeed + seeds; seed++) {
  const events = generateEvents(seed, length);
  const result = replay(events);
  if (result.disagreement !== null) {
    const smallest = shrink(events);
    console.log(`seed ${seed} (FC_DIFF_FIRST_SEED=${seed} FC_DIFF_SEEDS=1 FC_DIFF_EVENTS=${length} reruns it): ours and Lodestar disagree.`);
    console.log(`The smallest sequence showing it (${smallest.events.length} of ${events.length} events):`);
    console.log(describeEvents(smallest.events, smallest.disagreement));
    process.exit(1);
  }
  totals.events += result.applied;
  totals.headsCompared += result.headsCompared;
  totals.headsNotComparable += result.headsNotComparable;
  totals.invalidated += result.invalidated;
  totals.maxJustifiedEpoch = Math.max(totals.maxJustifiedEpoch, result.justifiedEpochs);
  totals.maxFinalizedEpoch = Math.max(totals.maxFinalizedEpoch, result.finalizedEpochs);
  full.checkpointsCompared += result.fullCheckpointsCompared;
  full.headsCompared += result.fullHeadsCompared;
  add(explained, result.explained);
  add(fullExplained, result.fullExplained);
  add(checkpointRules, result.checkpointRules);
  if ((seed - firstSeed + 1) % 500 === 0) console.log(`${seed - firstSeed + 1} seeds agree (${Math.round((Date.now() - started) / 1000)} s)`);
}
console.log(
  JSON.stringify(
    {
      seeds,
      eventsPerSeed: length,
      ...totals,
      headDisagreementsOfKnownCause: explained,
      lodestarForkChoice: {...full, headDisagreementsOfKnownCause: fullExplained, justifiedHeldBackByV12Rules: checkpointRules},
      seconds: Math.round((Date.now() - started) / 1000),
    },
    null,
    2
  )
);

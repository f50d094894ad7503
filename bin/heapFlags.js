// The V8 heap flags the launcher restarts itself with (they only take effect at start).
//
// V8's young generation grows to tens of MiB per semi-space by default on a machine with much
// memory, which the node's short-lived request garbage does not need: 2 MiB keeps the node's RSS
// about 50 MiB lower at rest and 140 MiB lower under REST load, at the same request rate
// (measured with bench:api's endpoints, on the dev chain). The old generation may grow by 20%
// past what the last full GC left before the next, not V8's default of up to 100% and more:
// another 50-60 MiB less after the same load (262-279 MiB against 195-215), at the same rate.
//
// A beacon node on the mainnet preset is another case: a state of a million validators (a heap
// of 2 GiB) and a slot's gossip (tens of thousands of messages, each in validation for a while).
// There a 2 MiB semi-space fills every few hundred messages, and each scavenge copies the
// messages still in flight and promotes them: under bench:gossip's load (all subnets, 1M
// validators, measured on a loaded machine) 617 to 880 scavenges in its 24 s took 5.3 to 7.6 s
// of the main thread; with 32 MiB, 37 to 108 took 1.7 to 2.7 s. The young generation may then hold
// up to 90 MiB more (three semi-spaces), 4% of that node's RSS.
//
// Native memory: glibc's malloc gives each thread that allocates its own arena (up to eight per
// core), and each keeps the memory it once held. The node's threads (libuv's pool, V8's helpers,
// LevelDB's compaction, the BLS workers) then hold arenas the main thread never reuses:
// MALLOC_ARENA_MAX=2 kept the dev node's RSS about 10 MiB lower after bench:api's mix at 1,000
// req/s (168 against 178 MiB, twice), with no more CPU a request. One the user set is kept.
export const SEMI_SPACE_FLAG = "--max-semi-space-size";

/** The environment the launcher restarts with: `env` and glibc's malloc arena limit. */
export function launchEnv(env) {
  return {...env, MALLOC_ARENA_MAX: env.MALLOC_ARENA_MAX ?? "2"};
}

/** The flags for `command` (the first argument) on `preset` (mainnet or minimal). */
export function heapFlags(command, preset) {
  const semiSpaceMiB = command === "node" && preset === "mainnet" ? 32 : 2;
  return [`${SEMI_SPACE_FLAG}=${semiSpaceMiB}`, "--heap-growing-percent=20"];
}

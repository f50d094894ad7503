import {hasher, setHasher} from "@chainsafe/persistent-merkle-tree";

/**
 * The SHA-256 behind every SSZ root (block and state roots, signing roots, the state root checked
 * at each block) is @chainsafe/persistent-merkle-tree's hasher, which is @noble/hashes, plain
 * JavaScript, unless a program picks another. hashtree (native, hashing up to 16 pairs at once
 * with the CPU's vector instructions) is what Lodestar runs; as-sha256 (WebAssembly) runs
 * wherever hashtree has no binding for the platform. All give the same roots; a dev chain's block
 * imports 20% faster with hashtree than with noble (bench/import.ts's segment).
 */
const FASTEST_FIRST = {
  hashtree: () => import("@chainsafe/persistent-merkle-tree/hasher/hashtree"),
  "as-sha256": () => import("@chainsafe/persistent-merkle-tree/hasher/as-sha256"),
};

/** Sets the fastest hasher this platform loads, once per process; returns its name. */
export async function useFastestHasher(): Promise<string> {
  if (hasher.name !== "noble") return hasher.name;
  for (const load of Object.values(FASTEST_FIRST)) {
    try {
      setHasher((await load()).hasher);
      break;
    } catch {
      // no binding for this platform: the next one
    }
  }
  return hasher.name;
}

/** The hasher in use now. */
export function hasherName(): string {
  return hasher.name;
}

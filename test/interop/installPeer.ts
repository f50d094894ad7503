// Installs the interop tests' Lodestar peer into its cache (test/interop/lodestarPeer.ts), for
// `npm test` to do beside the type check rather than inside the first interop test.
import {installLodestarPeer} from "./lodestarPeer.ts";

const started = performance.now();
try {
  const dir = await installLodestarPeer();
  console.log(`Lodestar peer installed in ${dir} (${((performance.now() - started) / 1000).toFixed(0)} s)`);
} catch (e) {
  // the interop tests install it again and fail with this message themselves
  console.error(`Lodestar peer not installed: ${(e as Error).message}`);
  process.exitCode = 1;
}

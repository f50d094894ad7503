// The order jest starts test files in. With timings from an earlier run (jest's cache), the
// longest first, as jest does. Without them (a clean clone, as in CI), jest would go by file
// size; here the files that start real processes (e2e, interop, oracles, conformance) go first,
// so that a long one does not start last and leave the other worker idle at the end.
import Sequencer from "@jest/test-sequencer";

const PROCESS_TESTS = /\/test\/(e2e|interop|oracles|conformance)\//;

export default class ProcessTestsFirst extends (Sequencer.default ?? Sequencer) {
  sort(tests) {
    const sorted = super.sort(tests);
    if (sorted.some((test) => test.duration != null)) return sorted;
    const rank = (test) => (PROCESS_TESTS.test(test.path) ? 0 : 1);
    // Array.prototype.sort is stable: jest's size order stays within each group
    return [...sorted].sort((a, b) => rank(a) - rank(b));
  }
}

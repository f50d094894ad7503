// Prints one plain closing line ("tests: N passed, N failed") that CI tooling reads. In a full
// run of two parts (scripts/test.js) each part leaves its counts in TEST_SUMMARY_DIR instead,
// and the runner prints the one line for both.
import {writeFileSync} from "node:fs";
import {join} from "node:path";

export default class SummaryReporter {
  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
    const passed = results.numPassedTests;
    const dir = process.env.TEST_SUMMARY_DIR;
    if (dir) writeFileSync(join(dir, `${process.pid}-${Date.now()}.json`), JSON.stringify({passed, failed, skipped}));
    else process.stdout.write(`\ntests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}\n`);
  }
}

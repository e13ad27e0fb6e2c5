// Prints one summary line — `tests: N passed, N failed[, N skipped]` — as the very
// last stdout output (written synchronously at process exit, so it also survives
// --forceExit). Suites that fail to run count as failures. If
// TESSERA_TEST_SUMMARY_FILE is set, appends {passed, failed, skipped} as a JSON line.
'use strict';
const fs = require('node:fs');

class CiLineReporter {
  onRunComplete(_testContexts, results) {
    const passed = results.numPassedTests;
    const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
    const skipped = results.numPendingTests + results.numTodoTests;
    const line = `tests: ${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}\n`;

    const summaryFile = process.env.TESSERA_TEST_SUMMARY_FILE;
    if (summaryFile) {
      fs.appendFileSync(summaryFile, JSON.stringify({ passed, failed, skipped }) + '\n');
    }

    process.once('exit', () => {
      try {
        fs.writeSync(1, line);
      } catch {
        // stdout already closed (e.g. piped into `head`): nothing sensible to do.
      }
    });
  }
}

module.exports = CiLineReporter;

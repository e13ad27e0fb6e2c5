// Prints one summary line — `tests: N passed, N failed[, N skipped]` — as the very
// last stdout output (written synchronously at process exit, so it also survives
// --forceExit). Suites that fail to run count as failures. If
// TESSERA_TEST_SUMMARY_FILE is set, appends {passed, failed, skipped, failures} as a JSON line, where
// failures names each failed test (file › title) with the first lines of its message, so that .ci/run
// can repeat them at the end of its output, next to the line a reader of the log's tail sees, and files names each
// test file with its duration (CI prints the slowest).
'use strict';
const fs = require('node:fs');
const { stripVTControlCharacters } = require('node:util');

const MESSAGE_LINES = 6;

/** Each failed test, or suite that failed to run, as `file › title: first lines of the message`. */
function failuresOf(results) {
  const out = [];
  for (const file of results.testResults) {
    const rel = file.testFilePath.replace(process.cwd() + '/', '');
    if (file.testExecError) out.push(`${rel}: ${brief(file.testExecError.message)}`);
    for (const t of file.testResults ?? []) {
      if (t.status !== 'failed') continue;
      out.push(`${rel} › ${t.fullName}: ${brief(t.failureMessages.join('\n'))}`);
    }
  }
  return out;
}

/** Each test file with its wall time in seconds (start to end, hooks included), for CI's "slowest files" list. */
function durationsOf(results) {
  return results.testResults.map((file) => ({
    file: file.testFilePath.replace(process.cwd() + '/', ''),
    seconds: Math.round((file.perfStats.end - file.perfStats.start) / 100) / 10,
  }));
}

function brief(message) {
  return stripVTControlCharacters(message)
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => l.trim() && !/^\s+at /.test(l))
    .slice(0, MESSAGE_LINES)
    .join(' | ')
    .slice(0, 1000);
}

class CiLineReporter {
  onRunComplete(_testContexts, results) {
    const passed = results.numPassedTests;
    const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
    const skipped = results.numPendingTests + results.numTodoTests;
    const line = `tests: ${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}\n`;

    const summaryFile = process.env.TESSERA_TEST_SUMMARY_FILE;
    if (summaryFile) {
      fs.appendFileSync(
        summaryFile,
        JSON.stringify({ passed, failed, skipped, failures: failuresOf(results), files: durationsOf(results) }) + '\n',
      );
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

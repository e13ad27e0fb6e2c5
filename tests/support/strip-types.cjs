// Jest transformer: erase TypeScript types with Node's own stripper, exactly as
// `node file.ts` does at runtime. 'strip' mode replaces types with whitespace,
// so line/column numbers in stack traces match the source without source maps.
// Non-erasable syntax (enums, parameter properties, ...) throws, as it would in Node.
'use strict';
const { stripTypeScriptTypes } = require('node:module');

module.exports = {
  process(sourceText, sourcePath) {
    return { code: stripTypeScriptTypes(sourceText, { mode: 'strip', sourceUrl: sourcePath }) };
  },
};

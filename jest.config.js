// Tests are TypeScript ES modules; swc strips the types, Node runs them as ESM
// (scripts/test.js starts jest with --experimental-vm-modules).
export default {
  testEnvironment: "node",
  extensionsToTreatAsEsm: [".ts"],
  transform: {
    "^.+\\.ts$": ["@swc/jest", {jsc: {parser: {syntax: "typescript"}, target: "es2023"}, module: {type: "es6"}}],
  },
  testMatch: ["<rootDir>/test/**/*.test.ts"],
  // @lodestar/light-client 1.28.1 (a test oracle, test/oracles) verifies with @chainsafe/bls 7, whose
  // default export picks its "blst-native" implementation: on the @chainsafe/blst 2.2 the override
  // gives it, that loads but throws at first use. Its herumi (wasm) implementation verifies correctly.
  // Our own code uses @chainsafe/blst, never @chainsafe/bls: only the light client is affected.
  moduleNameMapper: {"^@chainsafe/bls$": "<rootDir>/node_modules/@chainsafe/bls/lib/herumi/index.js"},
  reporters: ["default", "<rootDir>/scripts/summary-reporter.js"],
  testSequencer: "<rootDir>/scripts/test-sequencer.js",
};

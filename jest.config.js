// Tests are TypeScript ES modules; swc strips the types, Node runs them as ESM
// (scripts/test.js starts jest with --experimental-vm-modules).
export default {
  testEnvironment: "node",
  extensionsToTreatAsEsm: [".ts"],
  transform: {
    "^.+\\.ts$": ["@swc/jest", {jsc: {parser: {syntax: "typescript"}, target: "es2023"}, module: {type: "es6"}}],
  },
  testMatch: ["<rootDir>/test/**/*.test.ts"],
  reporters: ["default", "<rootDir>/scripts/summary-reporter.js"],
};

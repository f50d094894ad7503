/** The faults `mock-builder` can inject (no @lodestar import here: the CLI reads this before the preset is chosen). */
export const MOCK_BUILDER_FAULTS = ["none", "no-bid", "late-bid", "bad-signature", "wrong-parent", "higher-value", "lower-value", "withhold"] as const;
export type MockBuilderFault = (typeof MOCK_BUILDER_FAULTS)[number];

/**
 * The forks a dev chain can start from or move through, in order. Kept free of lodestar
 * imports: the command line is parsed before the consensus preset is fixed.
 */
export const DEV_FORKS = ["phase0", "altair", "bellatrix", "capella", "deneb", "electra", "fulu"] as const;
export type DevFork = (typeof DEV_FORKS)[number];

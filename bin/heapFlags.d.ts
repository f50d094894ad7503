export const SEMI_SPACE_FLAG: string;
/** The V8 heap flags the launcher restarts itself with, for `command` (the first argument) on `preset` (see heapFlags.js). */
export function heapFlags(command: string | undefined, preset: string | undefined): string[];

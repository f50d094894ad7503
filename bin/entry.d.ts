/** Whether the build under `root`/dist is there and no older than any source under `root` (see entry.js). */
export function buildIsCurrent(root: string, env?: Record<string, string | undefined>): boolean;
/** The URL of the module to import for `source` (a path under the root, `src/cli/main.ts`). */
export function entryUrl(root: string, source: string, useBuild: boolean): string;

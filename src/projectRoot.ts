import {fileURLToPath} from "node:url";

/**
 * The project's root folder (where package.json and bin/ are), whether this module runs from
 * its TypeScript source (`src/`) or from the build the launcher prefers (`dist/src/`, see
 * bin/entry.js).
 */
const here = fileURLToPath(new URL(".", import.meta.url));
/** Whether this is the JavaScript build, not the TypeScript sources. */
export const RUNNING_BUILD = /[/\\]dist[/\\]src[/\\]$/.test(here);
export const PROJECT_ROOT = fileURLToPath(new URL(RUNNING_BUILD ? "../../" : "../", import.meta.url));

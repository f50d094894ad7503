import {readFileSync} from "node:fs";
import {join} from "node:path";
import {PROJECT_ROOT} from "./projectRoot.ts";

/** `beacon-gateway/v<version>/<platform>-<arch>`: the node/version string clients see. */
const pkg = JSON.parse(readFileSync(join(PROJECT_ROOT, "package.json"), "utf8")) as {version: string};
export const PACKAGE_VERSION = pkg.version;
export const VERSION = `beacon-gateway/v${pkg.version}/${process.platform}-${process.arch}`;

import {readFileSync} from "node:fs";

/** `beacon-gateway/v<version>/<platform>-<arch>`: the node/version string clients see. */
const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {version: string};
export const PACKAGE_VERSION = pkg.version;
export const VERSION = `beacon-gateway/v${pkg.version}/${process.platform}-${process.arch}`;

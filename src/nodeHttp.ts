import type * as NodeHttp from "node:http";
import {createRequire} from "node:module";

/**
 * node:http, loaded with `require`. An ES import of node:http makes Node build the module's ES
 * facade, which reads every export, and three of them (WebSocket, CloseEvent, MessageEvent) are
 * getters that load Node's whole fetch implementation (undici): about 2.4 MB of heap and 14 MB of
 * RSS in a process that never fetches. `import type` from node:http costs nothing and stays.
 */
export const http: typeof NodeHttp = createRequire(import.meta.url)("node:http");

/**
 * The building blocks of the route table: parameter codecs (paramCodecs.ts: string <-> value,
 * with a clear 400 on bad input), body and data codecs over ssz types (bodyCodecs.ts: JSON and
 * SSZ, per fork where the type depends on it), and the metadata fields with their JSON keys and
 * headers (metaFields.ts).
 */
export * from "./paramCodecs.ts";
export * from "./bodyCodecs.ts";
export * from "./metaFields.ts";
export {parseFork} from "./textValues.ts";

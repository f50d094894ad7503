/** Bytes of a block's graffiti field. */
export const GRAFFITI_BYTES = 32;

/**
 * Graffiti as the command line, the REST API and the JSON-RPC shim take it: `0x` hex giving
 * raw bytes, or plain UTF-8 text; right-padded with zeros to 32 bytes. Throws with the reason.
 * (No lodestar imports: the command line is parsed before the consensus preset is fixed.)
 */
export function graffitiFromText(s: string): Uint8Array {
  if (s.startsWith("0x") && !/^0x([0-9a-fA-F]{2})*$/.test(s)) throw new Error(`graffiti ${JSON.stringify(s)} is not valid hex (0x and pairs of hex digits)`);
  const bytes = s.startsWith("0x") ? new Uint8Array(Buffer.from(s.slice(2), "hex")) : new TextEncoder().encode(s);
  if (bytes.length > GRAFFITI_BYTES) throw new Error(`graffiti is ${bytes.length} bytes, more than ${GRAFFITI_BYTES}`);
  const padded = new Uint8Array(GRAFFITI_BYTES);
  padded.set(bytes);
  return padded;
}

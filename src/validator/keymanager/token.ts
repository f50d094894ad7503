import {randomBytes, timingSafeEqual} from "node:crypto";
import {chmodSync, readFileSync, writeFileSync} from "node:fs";

/**
 * The keymanager API's bearer token (keymanager-oapi.yaml: a hex token of at least 256 bits in
 * a file). Without `--keymanager-token-file`, `<data dir>/api-token.txt` is read, or created
 * (mode 0600) with 32 random bytes at the first start and kept across restarts. A token file
 * that is given but unreadable or empty stops the start.
 */
export function loadOrCreateToken(file: string, given: boolean): string {
  let text: string | undefined;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    if (given || (e as NodeJS.ErrnoException).code !== "ENOENT") throw new Error(`cannot read the keymanager token file ${file}: ${(e as Error).message}`);
  }
  if (text === undefined) {
    const token = randomBytes(32).toString("hex");
    writeFileSync(file, token + "\n", {mode: 0o600, flag: "wx"});
    chmodSync(file, 0o600);
    return token;
  }
  const token = text.trim();
  if (token.length === 0) throw new Error(`the keymanager token file ${file} is empty`);
  return token;
}

/** 401 without a bearer token, 403 with another one, null for the right one. */
export function authorize(header: string | undefined, token: string): 401 | 403 | null {
  const match = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) return 401;
  const given = Buffer.from(match[1]);
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected) ? null : 403;
}

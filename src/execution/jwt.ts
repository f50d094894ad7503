import {createHmac, randomBytes, timingSafeEqual} from "node:crypto";
import {readFileSync, writeFileSync} from "node:fs";

/**
 * Engine API authentication (engine-api authentication.md): every HTTP request carries an
 * HS256 JWT with an `iat` claim, signed with a 256-bit secret shared with the execution client
 * through a hex file.
 */

/** The engine accepts `iat` within ±60 s of its own clock. */
export const JWT_IAT_WINDOW_SECONDS = 60;

const base64url = (data: Buffer | string): string => Buffer.from(data).toString("base64url");

/** Reads the hex secret (0x optional, surrounding whitespace ignored); a missing file is created (0600) with a random one. */
export function loadOrCreateJwtSecret(file: string): Uint8Array {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw new Error(`cannot read the JWT secret ${file}: ${(e as Error).message}`);
    const secret = randomBytes(32);
    try {
      // "wx": another process (the engine, the node) may be creating it at the same moment: theirs wins
      writeFileSync(file, secret.toString("hex") + "\n", {mode: 0o600, flag: "wx"});
      return new Uint8Array(secret);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EEXIST") return loadOrCreateJwtSecret(file);
      throw new Error(`cannot create the JWT secret ${file}: ${(err as Error).message}`);
    }
  }
  return parseJwtSecret(text, file);
}

export function parseJwtSecret(text: string, file = "the JWT secret"): Uint8Array {
  const hex = text.trim().replace(/^0x/i, "");
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new Error(`${file} must hold a hex-encoded 256-bit secret (64 hex digits)`);
  return new Uint8Array(Buffer.from(hex, "hex"));
}

/** A token for one request, issued at `nowSeconds`. */
export function createJwt(secret: Uint8Array, nowSeconds: number): string {
  const header = base64url(JSON.stringify({alg: "HS256", typ: "JWT"}));
  const payload = base64url(JSON.stringify({iat: Math.floor(nowSeconds)}));
  const signature = createHmac("sha256", secret).update(`${header}.${payload}`).digest("base64url");
  return `${header}.${payload}.${signature}`;
}

/** Why an engine refuses a token, or null when it accepts it (HS256 only, valid signature, `iat` within the window). */
export function verifyJwt(token: string, secret: Uint8Array, nowSeconds: number): string | null {
  const parts = token.split(".");
  if (parts.length !== 3) return "not a JWT";
  const [header, payload, signature] = parts;
  let alg: unknown;
  let iat: unknown;
  try {
    alg = JSON.parse(Buffer.from(header, "base64url").toString()).alg;
    iat = JSON.parse(Buffer.from(payload, "base64url").toString()).iat;
  } catch {
    return "not a JWT";
  }
  if (alg !== "HS256") return `algorithm ${JSON.stringify(alg)} is not HS256`;
  const expected = createHmac("sha256", secret).update(`${header}.${payload}`).digest();
  const given = Buffer.from(signature, "base64url");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return "signature does not verify";
  if (typeof iat !== "number") return "no iat claim";
  if (Math.abs(iat - nowSeconds) > JWT_IAT_WINDOW_SECONDS) return `iat ${iat} is more than ${JWT_IAT_WINDOW_SECONDS} s from now`;
  return null;
}

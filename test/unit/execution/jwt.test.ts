import {afterAll, describe, expect, it} from "@jest/globals";
import {createHmac} from "node:crypto";
import {mkdtempSync, readFileSync, rmSync, statSync, writeFileSync} from "node:fs";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {createJwt, loadOrCreateJwtSecret, verifyJwt} from "../../../src/execution/jwt.ts";

const decode = (part: string) => JSON.parse(Buffer.from(part, "base64url").toString());

describe("Engine API JWT (engine-api authentication.md)", () => {
  const dir = mkdtempSync(join(tmpdir(), "bg-jwt-"));
  afterAll(() => rmSync(dir, {recursive: true, force: true}));
  const secret = new Uint8Array(Buffer.from("a1".repeat(32), "hex"));

  it("issues HS256 tokens with an iat claim, signed as RFC 7515 defines", () => {
    const token = createJwt(secret, 1_700_000_000.7);
    const [header, payload, signature] = token.split(".");
    expect(decode(header)).toEqual({alg: "HS256", typ: "JWT"});
    expect(decode(payload)).toEqual({iat: 1_700_000_000});
    expect(signature).toBe(createHmac("sha256", secret).update(`${header}.${payload}`).digest("base64url"));
  });

  it("verifies the RFC 7515 appendix A.1 HS256 example's signature (which has no iat, so is refused for that)", () => {
    const token =
      "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
    const key = new Uint8Array(Buffer.from("AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow", "base64url"));
    expect(verifyJwt(token, key, 0)).toBe("no iat claim");
    expect(verifyJwt(token, secret, 0)).toBe("signature does not verify");
  });

  it("accepts iat within ±60 s of now and refuses the rest, alg none, other secrets and garbage", () => {
    const now = 1_700_000_000;
    expect(verifyJwt(createJwt(secret, now - 60), secret, now)).toBeNull();
    expect(verifyJwt(createJwt(secret, now + 60), secret, now)).toBeNull();
    expect(verifyJwt(createJwt(secret, now - 61), secret, now)).toMatch(/iat/);
    expect(verifyJwt(createJwt(secret, now + 61), secret, now)).toMatch(/iat/);
    expect(verifyJwt(createJwt(new Uint8Array(32), now), secret, now)).toBe("signature does not verify");
    const none = `${Buffer.from(JSON.stringify({alg: "none", typ: "JWT"})).toString("base64url")}.${Buffer.from(JSON.stringify({iat: now})).toString("base64url")}.`;
    expect(verifyJwt(none, secret, now)).toMatch(/not HS256/);
    expect(verifyJwt("not.a.token", secret, now)).toBe("not a JWT");
    expect(verifyJwt("nodots", secret, now)).toBe("not a JWT");
  });

  it("creates a missing secret file with mode 0600 and 64 hex digits, and reads it back unchanged", () => {
    const file = join(dir, "jwt.hex");
    const created = loadOrCreateJwtSecret(file);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, "utf8").trim()).toMatch(/^[0-9a-f]{64}$/);
    expect(Buffer.from(loadOrCreateJwtSecret(file)).equals(created)).toBe(true);
  });

  it("reads secrets with or without 0x and refuses files that are not a 256-bit hex secret", () => {
    const withPrefix = join(dir, "prefixed.hex");
    writeFileSync(withPrefix, "0x" + "a1".repeat(32) + "\n");
    expect(Buffer.from(loadOrCreateJwtSecret(withPrefix)).equals(secret)).toBe(true);
    const short = join(dir, "short.hex");
    writeFileSync(short, "abcd");
    expect(() => loadOrCreateJwtSecret(short)).toThrow(/256-bit/);
    const notHex = join(dir, "nothex.hex");
    writeFileSync(notHex, "z".repeat(64));
    expect(() => loadOrCreateJwtSecret(notHex)).toThrow(/256-bit/);
  });
});

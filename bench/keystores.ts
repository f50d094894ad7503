// `npm run bench:keystores`: start-up of a validator client's keys from EIP-2335 keystores. Makes
// BENCH_KEYSTORES (default 1000) PBKDF2 keystores with a low cost (BENCH_KEYSTORES_PBKDF2_C, default
// 1024) and BENCH_KEYSTORES_SCRYPT (default 10) with the standard scrypt cost (n = 2^18, 256 MiB each),
// in Lighthouse's layout, then loads each set as the client does at start (loadKeystoreDir: read,
// lock, decrypt a few at once on libuv's thread pool, check the key) in a fresh process, reporting
// its time, peak RSS and the longest event-loop stall, beside the raw time of decrypting the same
// files one after the other in one process (decryptKeystore and the BLS key, nothing else).
import {spawnSync} from "node:child_process";
import {mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync} from "node:fs";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {monitorEventLoopDelay} from "node:perf_hooks";
import {fileURLToPath} from "node:url";
import {SecretKey} from "@chainsafe/blst";
import {createKeystore, decryptKeystore, parseKeystore} from "../src/validator/keys/keystore.ts";
import {loadKeystoreDir, startupConcurrency} from "../src/validator/keys/keystoreDir.ts";

const COUNT = Number(process.env.BENCH_KEYSTORES ?? 1000);
const PBKDF2_C = Number(process.env.BENCH_KEYSTORES_PBKDF2_C ?? 1024);
const SCRYPT_COUNT = Number(process.env.BENCH_KEYSTORES_SCRYPT ?? 10);
const PASSWORD = "bench password";

/** In the child: load the directory as the client does at start, print what it took. */
async function child(dir: string, concurrency: number): Promise<void> {
  const delay = monitorEventLoopDelay({resolution: 5});
  delay.enable();
  const start = performance.now();
  const {keys, failures} = await loadKeystoreDir(join(dir, "keys"), {secretsDir: join(dir, "secrets")}, new Set(), concurrency);
  const ms = performance.now() - start;
  delay.disable();
  for (const key of keys) key.lock.release();
  if (failures.length > 0) throw new Error(`${failures.length} failed: ${failures[0].file}: ${failures[0].reason}`);
  process.stdout.write(JSON.stringify({keys: keys.length, ms, maxRssMiB: process.resourceUsage().maxRSS / 1024, maxLoopStallMs: delay.max / 1e6}) + "\n");
}

async function makeKeystores(dir: string, count: number, kdf: "pbkdf2" | "scrypt", cost: number): Promise<void> {
  mkdirSync(join(dir, "secrets"), {recursive: true});
  for (let i = 0; i < count; i++) {
    const sk = SecretKey.fromKeygen(Buffer.alloc(32, 0).fill(i % 256, 0, 16).fill(Math.floor(i / 256), 16));
    const pubkey = "0x" + Buffer.from(sk.toPublicKey().toBytes()).toString("hex");
    const keystore = await createKeystore(sk.toBytes(), PASSWORD, sk.toPublicKey().toBytes(), {kdf, cost});
    mkdirSync(join(dir, "keys", pubkey), {recursive: true});
    writeFileSync(join(dir, "keys", pubkey, "voting-keystore.json"), JSON.stringify(keystore));
    writeFileSync(join(dir, "secrets", pubkey), PASSWORD);
  }
}

/** The same files decrypted one after the other in this process. */
async function raw(dir: string): Promise<number> {
  const start = performance.now();
  for (const pubkey of readdirSync(join(dir, "keys"))) {
    const keystore = parseKeystore(JSON.parse(readFileSync(join(dir, "keys", pubkey, "voting-keystore.json"), "utf8")));
    SecretKey.fromBytes(await decryptKeystore(keystore, readFileSync(join(dir, "secrets", pubkey), "utf8"))).toPublicKey();
  }
  return performance.now() - start;
}

function measure(dir: string, concurrency: number): {keys: number; ms: number; maxRssMiB: number; maxLoopStallMs: number} {
  const out = spawnSync(process.execPath, [fileURLToPath(import.meta.url), "--child", dir, String(concurrency)], {encoding: "utf8"});
  if (out.status !== 0) throw new Error(`child failed: ${out.stderr}`);
  return JSON.parse(out.stdout);
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "bench-keystores-"));
  try {
    const sets: [string, number, "pbkdf2" | "scrypt", number][] = [
      [`${COUNT} pbkdf2 (c=${PBKDF2_C})`, COUNT, "pbkdf2", PBKDF2_C],
      ...(SCRYPT_COUNT > 0 ? [[`${SCRYPT_COUNT} scrypt (n=2^18)`, SCRYPT_COUNT, "scrypt", 2 ** 18] as [string, number, "scrypt", number]] : []),
    ];
    console.log(`keystore start-up (${startupConcurrency()} at once at start on this machine)`);
    for (const [name, count, kdf, cost] of sets) {
      const dir = join(root, kdf);
      await makeKeystores(dir, count, kdf, cost);
      const rawMs = await raw(dir);
      for (const concurrency of [1, startupConcurrency()]) {
        const r = measure(dir, concurrency);
        console.log(
          `${name}, ${concurrency} at once: ${r.ms.toFixed(0)} ms (raw, one after the other in one process: ${rawMs.toFixed(0)} ms), ` +
            `peak RSS ${r.maxRssMiB.toFixed(0)} MiB, longest event-loop stall ${r.maxLoopStallMs.toFixed(1)} ms`
        );
      }
    }
  } finally {
    rmSync(root, {recursive: true, force: true});
  }
}

if (process.argv[2] === "--child") await child(process.argv[3], Number(process.argv[4]));
else await main();

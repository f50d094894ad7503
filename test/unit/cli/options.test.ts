import {describe, expect, it} from "@jest/globals";
import {SignableENR} from "@chainsafe/enr";
import {generateKeyPair} from "@libp2p/crypto/keys";
import {peerIdFromPrivateKey} from "@libp2p/peer-id";
import {mkdtempSync, rmSync, writeFileSync} from "node:fs";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {UsageError, parseIndexRange, parseNodeOptions, parseValidatorOptions, type NodeOptions} from "../../../src/cli/options.ts";
import {graffitiFromText as graffitiBytes} from "../../../src/graffiti.ts";

function node(args: string[]): NodeOptions {
  const opts = parseNodeOptions(args);
  if (opts === "help") throw new Error("unexpected help");
  return opts;
}

/** The one-line usage error the command line gives, or null. */
function usageError(args: string[]): string | null {
  try {
    parseNodeOptions(args);
    return null;
  } catch (e) {
    expect(e).toBeInstanceOf(UsageError);
    expect((e as Error).message).not.toContain("\n");
    return (e as Error).message;
  }
}

async function signedEnrText(): Promise<string> {
  const key = await generateKeyPair("secp256k1");
  const enr = SignableENR.createV4(key.raw, {ip: new Uint8Array([10, 0, 0, 7]), udp: new Uint8Array([0x23, 0x28])});
  return enr.encodeTxt();
}

async function peerId(): Promise<string> {
  return peerIdFromPrivateKey(await generateKeyPair("secp256k1")).toString();
}

describe("node options", () => {
  it("has the spec's defaults", () => {
    const opts = node([]);
    expect(opts).toMatchObject({
      rest: false,
      restPort: 5052,
      restAddress: "127.0.0.1",
      restAllowOrigin: null,
      dataDir: "./data/dev",
      network: "dev",
      preset: "minimal",
      validators: 64,
      genesisTime: undefined,
      secondsPerSlot: 4,
      genesisFork: "fulu",
      forkEpochs: {},
      graffiti: undefined,
      logFormat: "text",
    });
    expect(opts.devValidators).toHaveLength(64);
    expect(opts.logLevel.level).toBe("INFO");
  });

  it("has the networking defaults", () => {
    expect(node([])).toMatchObject({
      listenAddress: "0.0.0.0",
      tcpPort: 9000,
      udpPort: 9000,
      enrAddress: undefined,
      bootnodes: [],
      directPeers: [],
      targetPeers: 50,
      maxPeers: 55,
      discovery: true,
      subscribeAllSubnets: false,
      genesisStateFile: undefined,
      checkpointSyncUrl: undefined,
    });
  });

  it("reads every option", async () => {
    const [enr1, enr2, enr3] = [await signedEnrText(), await signedEnrText(), await signedEnrText()];
    const id = await peerId();
    const opts = node([
      "--rest", "--rest-port", "6000", "--rest-address", "0.0.0.0", "--rest-allow-origin", "*", "--subscribe-all-subnets",
      "--data-dir", "/tmp/x", "--validators", "16", "--genesis-time", "1700000000", "--seconds-per-slot", "2",
      "--genesis-fork", "phase0", "--fork-epochs", "altair=1,bellatrix=2", "--dev-validators", "0..3,8", "--graffiti", "hello",
      "--log-level", "DEBUG; DISABLED:api", "--log-format", "json",
      "--listen-address", "::", "--tcp-port", "9100", "--udp-port", "9200", "--enr-address", "203.0.113.9",
      "--bootnodes", `${enr1},${enr2}`, "--bootnodes", enr3,
      "--direct-peer", `/ip4/10.0.0.2/tcp/9000/p2p/${id}`, "--direct-peer", "/dns4/peer.example/tcp/9001",
      "--target-peers", "20", "--max-peers", "30", "--no-discovery",
    ]);
    expect(opts).toMatchObject({
      rest: true, restPort: 6000, restAddress: "0.0.0.0", restAllowOrigin: "*", subscribeAllSubnets: true, dataDir: "/tmp/x",
      validators: 16, genesisTime: 1700000000, secondsPerSlot: 2, genesisFork: "phase0", forkEpochs: {altair: 1, bellatrix: 2},
      devValidators: [0, 1, 2, 3, 8], graffiti: "hello", logFormat: "json",
      listenAddress: "::", tcpPort: 9100, udpPort: 9200, enrAddress: "203.0.113.9", bootnodes: [enr1, enr2, enr3],
      directPeers: [`/ip4/10.0.0.2/tcp/9000/p2p/${id}`, "/dns4/peer.example/tcp/9001"], targetPeers: 20, maxPeers: 30, discovery: false,
    });
    expect(opts.logLevel.disabled).toEqual(["api"]);
  });

  it("--semi-supernode custodies half of the data columns, not with --subscribe-all-subnets", () => {
    expect(node([]).semiSupernode).toBe(false);
    expect(node(["--semi-supernode"]).semiSupernode).toBe(true);
    expect(() => node(["--semi-supernode", "--subscribe-all-subnets"])).toThrow("--semi-supernode: not with --subscribe-all-subnets, whose supernode keeps every column");
  });

  it("takes the UDP port from --tcp-port unless --udp-port is given", () => {
    expect(node(["--tcp-port", "9100"]).udpPort).toBe(9100);
    expect(node(["--tcp-port", "0", "--no-discovery"]).udpPort).toBe(0);
    expect(node(["--tcp-port", "0", "--udp-port", "9200"])).toMatchObject({tcpPort: 0, udpPort: 9200});
    expect(node(["--udp-port", "9300"])).toMatchObject({tcpPort: 9000, udpPort: 9300});
  });

  it("refuses UDP port 0 with discovery, in one line naming the option to give (discv5 advertises a fixed port)", () => {
    expect(() => node(["--tcp-port", "0"])).toThrow("--udp-port: discovery needs a fixed UDP port, and it follows --tcp-port 0: give --udp-port PORT, or --no-discovery");
    expect(() => node(["--udp-port", "0"])).toThrow("--udp-port: discovery needs a fixed UDP port: give one, or --no-discovery");
  });

  it("puts QUIC on the TCP port + 1 (Lighthouse's default) unless --quic-port is given; --no-quic turns it off", () => {
    expect(node([])).toMatchObject({quic: true, quicPort: 9001});
    expect(node(["--tcp-port", "9100"]).quicPort).toBe(9101);
    expect(node(["--tcp-port", "0", "--no-discovery"]).quicPort).toBe(0);
    expect(node(["--quic-port", "9500"]).quicPort).toBe(9500);
    expect(node(["--no-quic"]).quic).toBe(false);
  });

  it("takes the REST body limit in MiB, 20 by default", () => {
    expect(node([]).restBodyLimit).toBe(20);
    expect(node(["--rest-body-limit", "64"]).restBodyLimit).toBe(64);
    expect(() => node(["--rest-body-limit", "0"])).toThrow();
  });

  it("prunes sidecars after their retention window unless --no-prune-sidecars", () => {
    expect(node([]).pruneSidecars).toBe(true);
    expect(node(["--no-prune-sidecars"]).pruneSidecars).toBe(false);
  });

  it("takes --max-peers from --target-peers unless given, and never below it", () => {
    expect(node(["--target-peers", "20"]).maxPeers).toBe(22);
    expect(node(["--target-peers", "10"]).maxPeers).toBe(11);
    expect(node(["--target-peers", "7"]).maxPeers).toBe(8);
    expect(node(["--target-peers", "10", "--max-peers", "10"]).maxPeers).toBe(10);
    expect(usageError(["--target-peers", "10", "--max-peers", "9"])).toBe("--max-peers: 9 is below --target-peers 10");
    expect(usageError(["--max-peers", "49"])).toBe("--max-peers: 49 is below --target-peers 50");
  });

  it("checks each bootnode's ENR signature", async () => {
    const good = await signedEnrText();
    expect(node(["--bootnodes", ` ${good} ,`]).bootnodes).toEqual([good]);
    // a changed character breaks the RLP or the signature
    const tampered = good.slice(0, 30) + (good[30] === "A" ? "B" : "A") + good.slice(31);
    expect(usageError(["--bootnodes", `${good},${tampered}`])).toMatch(/^--bootnodes: ".{40}…" is not a valid ENR \(.+\)$/);
    expect(usageError(["--bootnodes", "enode://abc@10.0.0.1:30303"])).toMatch(/^--bootnodes: "enode:\/\/abc@10.0.0.1:30303" is not a valid ENR/);
  });

  it("checks each direct peer's multiaddr and peer id", async () => {
    const id = await peerId();
    expect(node(["--direct-peer", "/ip6/::1/tcp/9000"]).directPeers).toEqual(["/ip6/::1/tcp/9000"]);
    expect(usageError(["--direct-peer", "10.0.0.2:9000"])).toMatch(/^--direct-peer: "10.0.0.2:9000" is not a multiaddr/);
    expect(usageError(["--direct-peer", "/ip4/10.0.0.2/tcp/9000/p2p/notapeer"])).toBe(
      '--direct-peer: "/ip4/10.0.0.2/tcp/9000/p2p/notapeer" ends in "notapeer", which is not a peer id'
    );
    for (const addr of ["/ip4/10.0.0.2/udp/9000", `/p2p/${id}`, `/ip4/10.0.0.2/tcp/9000/p2p/${id}/ip4/10.0.0.3`, "/ip4/10.0.0.2"]) {
      expect(usageError(["--direct-peer", addr])).toContain(`--direct-peer: "${addr}" is not /ip4/ADDR/tcp/PORT`);
    }
  });

  it("starts from a genesis state file, with no interop genesis of its own", () => {
    const dir = mkdtempSync(join(tmpdir(), "bg-cli-"));
    try {
      const file = join(dir, "genesis.ssz");
      writeFileSync(file, new Uint8Array(8));
      expect(node(["--genesis-state", file])).toMatchObject({genesisStateFile: file, devValidators: [], genesisTime: undefined});
      expect(node(["--genesis-state", file, "--dev-validators", "0..1,70"]).devValidators).toEqual([0, 1, 70]);
      expect(node(["--genesis-state", file, "--genesis-time", "1700000000"]).genesisTime).toBe(1700000000);
      expect(usageError(["--genesis-state", file, "--validators", "16"])).toBe("--validators: not with --genesis-state: the validators come from that state");
      expect(usageError(["--genesis-state", file, "--dev-validators", "all"])).toContain("--dev-validators: ");
      expect(usageError(["--genesis-state", file, "--checkpoint-sync-url", "http://10.0.0.2:5052"])).toContain("--checkpoint-sync-url: not with --genesis-state");
      expect(usageError(["--genesis-state", join(dir, "missing.ssz")])).toBe(`--genesis-state: cannot read "${join(dir, "missing.ssz")}" (ENOENT)`);
      expect(usageError(["--genesis-state", dir])).toContain(`--genesis-state: cannot read "${dir}"`);
    } finally {
      rmSync(dir, {recursive: true, force: true});
    }
  });

  it("takes an http(s) checkpoint sync URL", () => {
    expect(node(["--checkpoint-sync-url", "https://beacon.example/"])).toMatchObject({checkpointSyncUrl: "https://beacon.example/", devValidators: []});
    expect(usageError(["--checkpoint-sync-url", "ftp://beacon.example"])).toBe('--checkpoint-sync-url: "ftp://beacon.example" is not an http(s) URL');
    expect(usageError(["--checkpoint-sync-url", "beacon"])).toBe('--checkpoint-sync-url: "beacon" is not a URL');
    expect(usageError(["--checkpoint-sync-url", "http://h", "--validators", "8"])).toContain("--validators: not with --checkpoint-sync-url");
    const root = "0x" + "AB".repeat(32);
    expect(node(["--checkpoint-sync-url", "http://h", "--wss-checkpoint", `${root}:1234`])).toMatchObject({wssCheckpoint: {root: root.toLowerCase(), epoch: 1234}});
    expect(node(["--checkpoint-sync-url", "http://h"])).toMatchObject({wssCheckpoint: undefined});
    expect(usageError(["--wss-checkpoint", `${root}:1`])).toBe("--wss-checkpoint: only with --checkpoint-sync-url: it checks the state that URL serves");
    expect(usageError(["--checkpoint-sync-url", "http://h", "--wss-checkpoint", "0xab:1"])).toContain("is not BLOCK_ROOT:EPOCH");
    expect(usageError(["--checkpoint-sync-url", "http://h", "--wss-checkpoint", root])).toContain("is not BLOCK_ROOT:EPOCH");
  });

  it.each([
    [["--bogus"], "bogus"],
    [["--rest-port", "abc"], "--rest-port"],
    [["--rest-port", "70000"], "out of range"],
    [["--preset", "huge"], "--preset"],
    [["--genesis-fork", "gloas"], "--genesis-fork"],
    [["--fork-epochs", "altair:1"], "--fork-epochs"],
    [["--fork-epochs", "phase0=1"], "unknown fork"],
    [["--dev-validators", "5..2"], "ends before"],
    [["--dev-validators", "64"], "not below"],
    [["--log-level", "LOUD"], "--log-level"],
    [["--log-format", "xml"], "--log-format"],
    [["--graffiti", "x".repeat(33)], "--graffiti"],
    [["--network", "mainnet"], "--network"],
    [["--listen-address", "localhost"], '--listen-address: "localhost" is not an IP address'],
    [["--tcp-port", "65536"], "--tcp-port: 65536 is out of range"],
    [["--udp-port", "-1"], "--udp-port"],
    [["--enr-address", "::1"], '--enr-address: "::1" is not an IPv4 address'],
    [["--enr-address", "10.0.0.256"], "--enr-address"],
    [["--target-peers", "many"], "--target-peers"],
    [["--no-discovery=yes"], "no-discovery"],
    [["--tcp-port"], "tcp-port"],
  ])("rejects %j naming the option", (args, text) => {
    expect(usageError(args)).toContain(text);
  });

  it("answers --help", () => {
    expect(parseNodeOptions(["--help"])).toBe("help");
    expect(parseNodeOptions(["--tcp-port", "1", "--help"])).toBe("help");
  });
});

describe("validator options", () => {
  it("needs --beacon-node", () => {
    expect(() => parseValidatorOptions([])).toThrow("--beacon-node URL[,URL…] is required");
    expect(() => parseValidatorOptions(["--beacon-node", "not a url"])).toThrow('--beacon-node: "not a url" is not a URL');
    expect(() => parseValidatorOptions(["--beacon-node", "ftp://h"])).toThrow('--beacon-node: "ftp://h" is not an http(s) URL');
    expect(() => parseValidatorOptions(["--beacon-node", ","])).toThrow("--beacon-node: give at least one URL");
  });

  it("takes several beacon nodes, comma-separated or repeated, in the order given, each once", () => {
    expect(parseValidatorOptions(["--beacon-node", "http://a:5052,http://b:5052", "--beacon-node", "https://c/api"])).toMatchObject({beaconNodes: ["http://a:5052", "http://b:5052", "https://c/api"]});
    expect(() => parseValidatorOptions(["--beacon-node", "http://a:5052,http://a:5052/"])).toThrow('--beacon-node: "http://a:5052/" is given twice');
  });

  it("reads indices and defaults", () => {
    const opts = parseValidatorOptions(["--beacon-node", "http://127.0.0.1:5052", "--interop-indices", "0..31"]);
    if (opts === "help") throw new Error("unexpected help");
    expect(opts.interopIndices).toHaveLength(32);
    expect(opts).toMatchObject({dataDir: "./data/validator", graffiti: undefined, logFormat: "text"});
    expect(parseValidatorOptions(["--beacon-node", "http://h"])).toMatchObject({interopIndices: Array.from({length: 64}, (_, i) => i)});
  });

  it("takes keystores with one password source, no interop keys unless named, and the keymanager's defaults", () => {
    const dir = mkdtempSync(join(tmpdir(), "keyopts-"));
    const PASSWORD_FILE = join(dir, "password.txt");
    writeFileSync(PASSWORD_FILE, "x");
    const opts = parseValidatorOptions(["--beacon-node", "http://h", "--keystores", dir, "--secrets", dir, "--keymanager"]);
    expect(opts).toMatchObject({keystoresDir: dir, secretsDir: dir, interopIndices: [], keymanager: true, keymanagerPort: 5062, keymanagerAddress: "127.0.0.1", doppelgangerProtection: false});
    expect(parseValidatorOptions(["--beacon-node", "http://h", "--keystores", dir, "--secrets", dir, "--interop-indices", "3"])).toMatchObject({interopIndices: [3]});
    expect(() => parseValidatorOptions(["--beacon-node", "http://h", "--keystores", dir])).toThrow("--keystores: give its passwords with one of --secrets DIR or --keystore-password-file FILE");
    expect(() => parseValidatorOptions(["--beacon-node", "http://h", "--secrets", dir])).toThrow("--secrets: only with --keystores");
    expect(() => parseValidatorOptions(["--beacon-node", "http://h", "--keystores", join(dir, "no-such-dir-here"), "--secrets", dir])).toThrow("is not a directory");
    expect(parseNodeOptions(["--keystores", dir, "--keystore-password-file", PASSWORD_FILE, "--doppelganger-protection"])).toMatchObject({keystoresDir: dir, keystorePasswordFile: PASSWORD_FILE, doppelgangerProtection: true});
    rmSync(dir, {recursive: true, force: true});
  });
});

describe("ranges and graffiti", () => {
  it("parses ranges", () => {
    expect(parseIndexRange("none", 8)).toEqual([]);
    expect(parseIndexRange("all", 3)).toEqual([0, 1, 2]);
    expect(parseIndexRange("3,1..2", 8)).toEqual([1, 2, 3]);
  });

  it("pads text and takes 0x hex as raw bytes", () => {
    expect(Buffer.from(graffitiBytes("hi")).toString("hex")).toBe("6869" + "00".repeat(30));
    expect(Buffer.from(graffitiBytes("0xff01")).toString("hex")).toBe("ff01" + "00".repeat(30));
    expect(() => graffitiBytes("0x" + "ab".repeat(33))).toThrow("more than 32");
  });
});

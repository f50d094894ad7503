import {describe, expect, it} from "@jest/globals";
import {COMPAT_CHECK_HELP, COMPAT_HELP, NODE_HELP, parseCompatCheckOptions, parseCompatOptions, parseNodeOptions} from "../../src/cli/options.ts";

/** The command line of the JSON-RPC interface: `node --rpc ...`, `compat --upstream ...` and `compat check ...`. */

describe("node --rpc options", () => {
  it("are off by default, on port 9190 of the local machine, in the legacy encoding", () => {
    expect(parseNodeOptions([])).toMatchObject({rpc: false, rpcPort: 9190, rpcAddress: "127.0.0.1", rpcEncoding: "legacy"});
  });

  it("are read", () => {
    const opts = parseNodeOptions(["--rpc", "--rpc-port", "0", "--rpc-address", "::1", "--rpc-encoding", "rest"]);
    expect(opts).toMatchObject({rpc: true, rpcPort: 0, rpcAddress: "::1", rpcEncoding: "rest"});
  });

  it.each([
    [["--rpc-port", "x"], "--rpc-port"],
    [["--rpc-port", "65536"], "out of range"],
    [["--rpc-address", "example.com"], "--rpc-address"],
    [["--rpc-encoding", "hex"], "--rpc-encoding"],
  ])("rejects %j naming the option", (args, text) => {
    expect(() => parseNodeOptions(args)).toThrow(text);
  });

  it("are in the help", () => {
    for (const option of ["--rpc ", "--rpc-port", "--rpc-address", "--rpc-encoding"]) expect(NODE_HELP).toContain(option);
  });
});

describe("compat options", () => {
  it("need an http(s) upstream, and default like the node's", () => {
    expect(parseCompatOptions(["--upstream", "http://10.0.0.2:5052"])).toMatchObject({
      upstream: "http://10.0.0.2:5052",
      rpcPort: 9190,
      rpcAddress: "127.0.0.1",
      rpcEncoding: "legacy",
      logFormat: "text",
    });
    expect(() => parseCompatOptions([])).toThrow("--upstream URL is required");
    expect(() => parseCompatOptions(["--upstream", "nope"])).toThrow("--upstream");
    expect(() => parseCompatOptions(["--upstream", "ftp://host"])).toThrow("http(s)");
    expect(() => parseCompatOptions(["--upstream", "http://h", "--rest"])).toThrow("rest");
  });

  it("answer --help", () => {
    expect(parseCompatOptions(["--help"])).toBe("help");
    expect(COMPAT_HELP).toContain("--upstream URL");
  });
});

describe("compat check options", () => {
  it("need both endpoints, as http(s) URLs", () => {
    expect(parseCompatCheckOptions(["--rpc", "http://127.0.0.1:9190", "--rest", "https://node.example:5052"])).toEqual({
      rpc: "http://127.0.0.1:9190",
      rest: "https://node.example:5052",
    });
    expect(() => parseCompatCheckOptions(["--rest", "http://h:5052"])).toThrow("--rpc URL is required");
    expect(() => parseCompatCheckOptions(["--rpc", "http://h:9190"])).toThrow("--rest URL is required");
    expect(() => parseCompatCheckOptions(["--rpc", "ftp://h", "--rest", "http://h"])).toThrow("http(s)");
    expect(() => parseCompatCheckOptions(["--rpc", "http://h", "--rest", "http://h", "--upstream", "http://h"])).toThrow("upstream");
  });

  it("answer --help, and compat's help names the check", () => {
    expect(parseCompatCheckOptions(["--help"])).toBe("help");
    expect(COMPAT_CHECK_HELP).toContain("--rpc URL");
    expect(COMPAT_HELP).toContain("compat check --rpc URL --rest URL");
  });
});

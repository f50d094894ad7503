import {describe, expect, it} from "@jest/globals";
import {MOCK_ENGINE_COMMAND} from "../../../src/cli/executionOptions.ts";
import {UsageError, parseCommand} from "../../../src/cli/optionTable.ts";
import {parseNodeOptions} from "../../../src/cli/options.ts";

function usageError(parse: () => unknown): string | null {
  try {
    parse();
    return null;
  } catch (e) {
    expect(e).toBeInstanceOf(UsageError);
    return (e as Error).message;
  }
}

describe("execution engine options", () => {
  it("default to the in-process mock engine and the zero fee recipient", () => {
    expect(parseNodeOptions([])).toMatchObject({
      executionEndpoint: undefined,
      jwtSecret: undefined,
      suggestedFeeRecipient: "0x0000000000000000000000000000000000000000",
    });
  });

  it("take an http(s) endpoint, its JWT secret file and a fee recipient address", () => {
    const args = ["--execution-endpoint", "http://127.0.0.1:8551", "--jwt-secret", "/tmp/jwt.hex", "--suggested-fee-recipient", "0xABCDEF0123456789abcdef0123456789ABCDEF01"];
    expect(parseNodeOptions(args)).toMatchObject({
      executionEndpoint: "http://127.0.0.1:8551",
      jwtSecret: "/tmp/jwt.hex",
      suggestedFeeRecipient: "0xabcdef0123456789abcdef0123456789abcdef01",
    });
  });

  it("refuse a non-http endpoint, a secret without an endpoint and a malformed address, naming the option", () => {
    expect(usageError(() => parseNodeOptions(["--execution-endpoint", "ws://127.0.0.1:8551"]))).toMatch(/^--execution-endpoint: .*not an http/);
    expect(usageError(() => parseNodeOptions(["--jwt-secret", "/tmp/jwt.hex"]))).toMatch(/^--jwt-secret: only with --execution-endpoint/);
    expect(usageError(() => parseNodeOptions(["--suggested-fee-recipient", "0x1234"]))).toMatch(/^--suggested-fee-recipient: .*execution address/);
  });

  it("mock-engine needs --jwt-secret and takes a port and blobs per block", () => {
    expect(usageError(() => parseCommand(MOCK_ENGINE_COMMAND, []))).toMatch(/--jwt-secret FILE is required/);
    expect(parseCommand(MOCK_ENGINE_COMMAND, ["--jwt-secret", "j.hex", "--port", "0", "--blobs-per-block", "2"])).toMatchObject({port: 0, jwtSecret: "j.hex", blobsPerBlock: 2, address: "127.0.0.1"});
    expect(usageError(() => parseCommand(MOCK_ENGINE_COMMAND, ["--jwt-secret", "j.hex", "--blobs-per-block", "99"]))).toMatch(/^--blobs-per-block/);
  });
});

describe("network options", () => {
  const minimalConfig = "/work/shared/specs/consensus/configs/minimal.yaml";

  it("refuse a network other than dev without a starting state, naming the options to add", () => {
    expect(usageError(() => parseNodeOptions(["--network", "mainnet", "--execution-endpoint", "http://127.0.0.1:8551"]))).toMatch(
      /^--network: mainnet needs a starting state: add --checkpoint-sync-url URL .* or --genesis-state FILE/
    );
    expect(usageError(() => parseNodeOptions(["--network", "goerli"]))).toMatch(/^--network: /);
    expect(usageError(() => parseNodeOptions(["--network", "holesky"]))).toMatch(/^--network: holesky needs a starting state/);
  });

  it("refuse a public network without an execution client, and the dev chain's own options", () => {
    expect(usageError(() => parseNodeOptions(["--network", "hoodi", "--checkpoint-sync-url", "http://127.0.0.1:5052"]))).toMatch(/needs --execution-endpoint/);
    const hoodi = ["--network", "hoodi", "--checkpoint-sync-url", "http://127.0.0.1:5052", "--execution-endpoint", "http://127.0.0.1:8551"];
    expect(usageError(() => parseNodeOptions([...hoodi, "--seconds-per-slot", "2"]))).toMatch(/--seconds-per-slot is for the dev chain/);
    expect(usageError(() => parseNodeOptions([...hoodi, "--preset", "minimal"]))).toMatch(/^--preset: hoodi runs the mainnet preset/);
    expect(parseNodeOptions(hoodi)).toMatchObject({network: "hoodi", preset: "mainnet", dataDir: "./data/hoodi", devValidators: []});
  });

  it("take a custom network's config.yaml, whose PRESET_BASE is the preset", () => {
    expect(usageError(() => parseNodeOptions(["--network", "custom", "--checkpoint-sync-url", "http://127.0.0.1:5052"]))).toMatch(/^--config: --network custom needs its config.yaml/);
    expect(usageError(() => parseNodeOptions(["--config", minimalConfig]))).toMatch(/^--config: only with --network custom/);
    expect(parseNodeOptions(["--network", "custom", "--config", minimalConfig, "--checkpoint-sync-url", "http://127.0.0.1:5052"])).toMatchObject({
      network: "custom",
      networkConfig: minimalConfig,
      preset: "minimal",
    });
  });
});

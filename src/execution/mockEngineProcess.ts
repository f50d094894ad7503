import {type RunningEngineServer, startEngineServer} from "./engineServer.ts";
import {loadOrCreateJwtSecret} from "./jwt.ts";
import {GENESIS_EXECUTION_BLOCK_HASH, MockExecutionEngine} from "./mockEngine.ts";
import {MockEngineRpc} from "./mockEngineRpc.ts";

/** What `beacon-gateway mock-engine` serves with (its option table: cli/executionOptions.ts). */
export interface MockEngineProcessOptions {
  port: number;
  address: string;
  /** the JWT secret's file (created when missing) */
  jwtSecret: string;
  blobsPerBlock: number;
}

/** `beacon-gateway mock-engine`: the composition of the mock engine, its Engine API methods and the HTTP server. */
export async function startMockEngineProcess(opts: MockEngineProcessOptions): Promise<RunningEngineServer> {
  const jwtSecret = loadOrCreateJwtSecret(opts.jwtSecret);
  const engine = new MockExecutionEngine({blobsPerBlock: opts.blobsPerBlock});
  // the first blob loads KZG's trusted setup (seconds): before serving, not inside a getPayload's 1 s
  if (opts.blobsPerBlock > 0) {
    const attributes = {timestamp: 0, prevRandao: new Uint8Array(32), suggestedFeeRecipient: new Uint8Array(20), withdrawals: [], parentBeaconBlockRoot: new Uint8Array(32)};
    await engine.buildPayload("fulu", {blockHash: GENESIS_EXECUTION_BLOCK_HASH, blockNumber: 0, gasLimit: 0}, attributes);
  }
  const rpc = new MockEngineRpc(engine);
  return startEngineServer({port: opts.port, address: opts.address, jwtSecret, rpc});
}

import type {IncomingMessage, Server, ServerResponse} from "node:http";
import {http} from "../nodeHttp.ts";
import type {ChainForkConfig} from "@lodestar/config";
import {ForkName} from "@lodestar/params";
import type {SignedBlindedBeaconBlock} from "@lodestar/types";
import {fromHex} from "@lodestar/utils";
import {getLogger} from "../log.ts";
import {listen} from "../httpListen.ts";
import {MOCK_BUILDER_FAULTS, type MockBuilderFault} from "./faults.ts";
import {BuilderRequestError, type MockBuilder} from "./mockBuilder.ts";
import {type SignedValidatorRegistration, SignedValidatorRegistrations, builderTypes, isBuilderFork} from "./types.ts";

/**
 * The mock builder's HTTP server: the builder API's routes (builder-oapi.yaml), JSON and SSZ both
 * ways, and for tests `POST /mock/fault` (`{"fault": "withhold"}`; `none` clears it).
 */

const SSZ = "application/octet-stream";
const JSON_TYPE = "application/json";
const MAX_BODY_BYTES = 32 * 1024 * 1024;
const HEADER_PATH = /^\/eth\/v1\/builder\/header\/(\d+)\/(0x[0-9a-fA-F]{64})\/(0x[0-9a-fA-F]{96})$/;

const log = getLogger("builder");

export interface RunningMockBuilder {
  port: number;
  close(): Promise<void>;
}

export async function startMockBuilderServer(builder: MockBuilder, config: ChainForkConfig, opts: {port: number; address: string}): Promise<RunningMockBuilder> {
  const server: Server = http.createServer((req, res) => {
    handle(builder, config, req, res).catch((e: unknown) => {
      const status = e instanceof BuilderRequestError ? e.status : 500;
      if (status === 500 && !(e instanceof BuilderRequestError)) log.error({err: (e as Error).message, url: req.url}, "request failed");
      sendJson(res, status, {code: status, message: (e as Error).message});
    });
  });
  const listening = await listen(server, opts.port, opts.address, {what: "the mock builder", option: "--port"});
  log.info({port: listening.port, address: opts.address, pubkey: Buffer.from(builder.pubkey).toString("hex")}, "mock builder listening");
  return listening;
}

async function handle(builder: MockBuilder, config: ChainForkConfig, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? "/", "http://localhost");
  const path = url.pathname;
  if (req.method === "GET" && path === "/eth/v1/builder/status") return void res.writeHead(200).end();
  if (req.method === "POST" && path === "/eth/v1/builder/validators") {
    const body = await readBody(req);
    let list: SignedValidatorRegistration[];
    try {
      list = isSsz(req) ? SignedValidatorRegistrations.deserialize(body) : SignedValidatorRegistrations.fromJson(JSON.parse(body.toString()));
    } catch (e) {
      throw new BuilderRequestError(`malformed registrations: ${(e as Error).message}`);
    }
    builder.registerValidators(list);
    return void res.writeHead(200).end();
  }
  const header = req.method === "GET" ? HEADER_PATH.exec(path) : null;
  if (header) {
    const result = await builder.getHeader(Number(header[1]), fromHex(header[2]), fromHex(header[3]));
    if (!result) return void res.writeHead(204).end();
    const type = builderTypes(result.version).SignedBuilderBid;
    if (prefersSsz(req)) return void res.writeHead(200, {"Content-Type": SSZ, "Eth-Consensus-Version": result.version}).end(type.serialize(result.bid));
    return sendJson(res, 200, {version: result.version, data: type.toJson(result.bid)}, {"Eth-Consensus-Version": result.version});
  }
  if (req.method === "POST" && (path === "/eth/v1/builder/blinded_blocks" || path === "/eth/v2/builder/blinded_blocks")) {
    const v2 = path.startsWith("/eth/v2");
    const signed = await readBlindedBlock(config, req);
    const revealed = await builder.submitBlindedBlock(signed, v2);
    if (!revealed) return void res.writeHead(202).end();
    const type = builderTypes(revealed.fork).PayloadResponse;
    if (prefersSsz(req)) return void res.writeHead(200, {"Content-Type": SSZ, "Eth-Consensus-Version": revealed.fork}).end(type.serialize(revealed.payload));
    return sendJson(res, 200, {version: revealed.fork, data: type.toJson(revealed.payload)}, {"Eth-Consensus-Version": revealed.fork});
  }
  if (req.method === "POST" && path === "/mock/fault") {
    const fault = (JSON.parse((await readBody(req)).toString()) as {fault?: string}).fault;
    if (!MOCK_BUILDER_FAULTS.includes(fault as MockBuilderFault)) throw new BuilderRequestError(`unknown fault ${fault} (${MOCK_BUILDER_FAULTS.join(", ")})`);
    builder.fault = fault as MockBuilderFault;
    log.info({fault}, "fault set");
    return void res.writeHead(200).end();
  }
  throw new BuilderRequestError(`no route ${req.method} ${path}`, 404);
}

/** The block's fork: `Eth-Consensus-Version` (required with SSZ), else the fork of its slot. */
async function readBlindedBlock(config: ChainForkConfig, req: IncomingMessage): Promise<SignedBlindedBeaconBlock> {
  const body = await readBody(req);
  const named = req.headers["eth-consensus-version"];
  try {
    if (isSsz(req)) {
      if (typeof named !== "string" || !Object.values(ForkName).includes(named as ForkName) || !isBuilderFork(named as ForkName)) {
        throw new Error("an SSZ body needs Eth-Consensus-Version naming a builder fork");
      }
      return builderTypes(named as ForkName).SignedBlindedBeaconBlock.deserialize(body);
    }
    const json = JSON.parse(body.toString()) as {message?: {slot?: string}};
    const fork = config.getForkName(Number(json.message?.slot));
    return builderTypes(fork).SignedBlindedBeaconBlock.fromJson(json);
  } catch (e) {
    throw new BuilderRequestError(`malformed blinded block: ${(e as Error).message}`);
  }
}

function isSsz(req: IncomingMessage): boolean {
  return (req.headers["content-type"] ?? "").startsWith(SSZ);
}

/** Whether the Accept header ranks SSZ at least as high as JSON (an absent header is JSON). */
function prefersSsz(req: IncomingMessage): boolean {
  const q = (type: string): number => {
    for (const part of (req.headers.accept ?? "").split(",")) {
      const [media, ...params] = part.trim().split(";");
      if (media.trim() !== type) continue;
      const qParam = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
      return qParam ? Number(qParam.slice(2)) : 1;
    }
    return type === JSON_TYPE && !req.headers.accept ? 1 : 0;
  };
  const ssz = q(SSZ);
  return ssz > 0 && ssz >= q(JSON_TYPE);
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        reject(new BuilderRequestError("body too large", 413));
        req.destroy();
      } else chunks.push(c);
    });
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent) return void res.end();
  res.writeHead(status, {"Content-Type": JSON_TYPE, ...headers}).end(JSON.stringify(body));
}

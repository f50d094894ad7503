import {afterAll, beforeAll, describe, expect, it} from "@jest/globals";
import {PassThrough} from "node:stream";
import request from "supertest";
import {createApp} from "../../../src/api/server/index.ts";
import {parseNodeOptions} from "../../../src/cli/options.ts";
import {getLogger, initLogging, logManager, parseLogDirective} from "../../../src/log.ts";
import {createTestContext, type TestContext} from "./testContext.ts";

/** The run-time log directive (POST /ext/v1/chronicles/settings) and the request log lines it governs. */

interface Line {
  level: number;
  topic: string;
  msg: string;
  req?: {method: string; url: string};
  res?: {statusCode: number};
}

let t: TestContext;
let app: ReturnType<typeof createApp>;
let lines: Line[] = [];
const initial = logManager().current();

beforeAll(() => {
  const out = new PassThrough();
  out.on("data", (chunk: Buffer) => lines.push(...chunk.toString().trim().split("\n").map((l) => JSON.parse(l) as Line)));
  initLogging({directive: parseLogDirective("INFO; TRACE:chain"), format: "json", destination: out});
  t = createTestContext();
  app = createApp({}, t.ctx);
});
afterAll(() => void initLogging({directive: initial, format: "text"}));

/** Lines are written synchronously; a tick lets the stream deliver them. */
async function linesOf(action: () => Promise<unknown>): Promise<Line[]> {
  lines = [];
  await action();
  await new Promise((resolve) => setImmediate(resolve));
  return lines;
}

const chainWork = () => getLogger("chain").debug({slot: 1}, "chain work");
const headRequest = () => request(app).get("/ext/v1/chain/head").expect(200);

describe("run-time log levels", () => {
  it("a directive sent to the endpoint changes which topic's debug lines appear", async () => {
    let seen = await linesOf(async () => {
      chainWork();
      await headRequest();
    });
    expect(seen.map((l) => [l.topic, l.msg])).toEqual([["chain", "chain work"]]);

    await request(app).post("/ext/v1/chronicles/settings").set("Content-Type", "text/plain").send("DEBUG; REQUIRED:none; DISABLED:chain").expect(200);

    seen = await linesOf(async () => {
      chainWork();
      await headRequest();
    });
    expect(seen.map((l) => [l.topic, l.msg])).toEqual([["api", "request completed"]]);
    expect(seen[0]).toMatchObject({level: 20, req: {method: "GET", url: "/ext/v1/chain/head"}, res: {statusCode: 200}});
  });

  it("request lines: debug below 500, warn for 5xx, never bodies or headers", async () => {
    logManager().apply(parseLogDirective("DEBUG"));
    const seen = await linesOf(async () => {
      await request(app).post("/ext/v1/graffiti").set("Content-Type", "text/plain").set("X-Secret", "s3cr3t").send("a private note").expect(200);
      await request(app).get("/ext/v1/nothing").expect(404);
      const getHead = t.chain.getHead;
      t.chain.getHead = () => {
        throw new Error("head unavailable");
      };
      await request(app).get("/ext/v1/chain/head").expect(500);
      t.chain.getHead = getHead;
    });
    const requests = seen.filter((l) => l.req);
    expect(requests.map((l) => [l.level, l.res?.statusCode])).toEqual([[20, 200], [20, 404], [40, 500]]);
    const text = JSON.stringify(seen);
    expect(text).not.toContain("a private note");
    expect(text).not.toContain("s3cr3t");
  });

  it("at INFO no request lines; a disabled topic says nothing at all", async () => {
    logManager().apply(parseLogDirective("INFO; DISABLED:api"));
    const seen = await linesOf(async () => {
      await headRequest();
      await request(app).get("/ext/v1/nothing").expect(404);
    });
    expect(seen).toEqual([]);
  });

  it("--log-level takes the same directive", () => {
    const opts = parseNodeOptions(["--log-level", "DEBUG; TRACE:forkchoice; REQUIRED:none; DISABLED:chain"]);
    expect(opts !== "help" && opts.logLevel).toEqual(parseLogDirective("DEBUG; TRACE:forkchoice; REQUIRED:none; DISABLED:chain"));
  });
});

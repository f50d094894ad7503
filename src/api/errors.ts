import {getLogger} from "../log.ts";
import {DiskFullError} from "../db/diskFull.ts";

/** One rejected item of a batch submission: its position in the request list and why. */
export interface IndexedFailure {
  index: number;
  message: string;
}

/** The spec's error body (`ErrorMessage`, or `IndexedErrorMessage` when `failures` is present). */
export interface ErrorBody {
  code: number;
  message: string;
  failures?: IndexedFailure[];
}

/** An error with an HTTP status meant for the API caller. Everything else becomes a 500. */
export class ApiError extends Error {
  readonly status: number;
  readonly failures?: IndexedFailure[];

  constructor(status: number, message: string, failures?: IndexedFailure[]) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.failures = failures;
  }
}

export const badRequest = (message: string): ApiError => new ApiError(400, message);
export const notFound = (message: string): ApiError => new ApiError(404, message);

const log = getLogger("api");

/** The one place errors become a status and a body. Unknown errors are logged and hidden behind a generic 500. */
export function renderError(err: unknown, context: string): {status: number; body: ErrorBody} {
  if (err instanceof ApiError) {
    const body: ErrorBody = {code: err.status, message: err.message};
    if (err.failures) body.failures = err.failures;
    return {status: err.status, body};
  }
  // writes are paused for lack of space: said once where it began (db/diskFull.ts), not at every request
  if (err instanceof DiskFullError) return {status: 503, body: {code: 503, message: err.message}};
  log.error({err, route: context}, "Unhandled error in API handler");
  return {status: 500, body: {code: 500, message: "Internal server error"}};
}

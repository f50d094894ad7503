import {ApiError} from "../errors.ts";
import {routes, type OperationId} from "../routes/index.ts";

/**
 * The 400 of an old route asked for what its object format cannot carry (v1 attestations on
 * electra, the v1 debug state after phase0): says why, and names the route to use instead.
 */
export function useNewerRoute(reason: string, operationId: OperationId): ApiError {
  const {method, path} = routes[operationId];
  return new ApiError(400, `${reason}: use ${method} ${path} (${operationId})`);
}

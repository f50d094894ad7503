import {ContainerType, type ValueOf} from "@chainsafe/ssz";
import {ssz, type phase0} from "@lodestar/types";
import {jsonData, listData, sszData} from "../codecs.ts";
import {route, type NoArgs, type NoMeta} from "./types.ts";

/** Routes of the Config tag. */

/** `Fork` with an epoch that may be FAR_FUTURE_EPOCH (unscheduled forks). */
export const ForkType = new ContainerType({previousVersion: ssz.Version, currentVersion: ssz.Version, epoch: ssz.EpochInf}, {jsonCase: "eth2"});

export const DepositContractType = new ContainerType({chainId: ssz.UintNum64, address: ssz.ExecutionAddress}, {jsonCase: "eth2"});
export type DepositContract = ValueOf<typeof DepositContractType>;

/** The spec map: every value a string, except list values such as BLOB_SCHEDULE (JSON arrays). */
export type SpecMap = Record<string, string | Record<string, string>[]>;

export const configRoutes = {
  getSpec: route<NoArgs, SpecMap>({
    method: "GET",
    path: "/eth/v1/config/spec",
    version: 1,
    tag: "Config",
    args: {},
    response: {kind: "data", data: jsonData(), meta: {}},
  }),
  getForkSchedule: route<NoArgs, phase0.Fork[]>({
    method: "GET",
    path: "/eth/v1/config/fork_schedule",
    version: 1,
    tag: "Config",
    args: {},
    response: {kind: "data", data: listData<phase0.Fork, NoMeta>(ForkType), meta: {}},
  }),
  getDepositContract: route<NoArgs, DepositContract>({
    method: "GET",
    path: "/eth/v1/config/deposit_contract",
    version: 1,
    tag: "Config",
    args: {},
    response: {kind: "data", data: sszData(() => DepositContractType, {ssz: false}), meta: {}},
  }),
};

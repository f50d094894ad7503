import type {bellatrix} from "@lodestar/types";
import {toHex} from "@lodestar/utils";
import type {BeaconDb} from "./db/beaconDb.ts";

const DEFAULT_GRAFFITI = new Uint8Array(32);
Buffer.from("beacon-gateway").copy(DEFAULT_GRAFFITI);
/** Where fees go when a proposer registered no fee recipient (the dev chain's burn address). */
const DEFAULT_FEE_RECIPIENT = new Uint8Array(20);

/**
 * Operator settings that change at run time: the graffiti (kept in the database, so a
 * change survives restarts) and the proposers' fee recipients (registered through
 * prepare_beacon_proposer, kept in memory as the spec intends: clients re-send them every epoch).
 */
export class NodeSettings {
  private feeRecipients = new Map<number, Uint8Array>();
  /** builder registrations by 0x public key: kept, but with no builder connected nothing reads them */
  private validatorRegistrations = new Map<string, bellatrix.ValidatorRegistrationV1>();

  private readonly db: BeaconDb;
  private current: Uint8Array;
  /** `--suggested-fee-recipient` */
  private defaultFeeRecipient: Uint8Array = DEFAULT_FEE_RECIPIENT;

  private constructor(db: BeaconDb, current: Uint8Array) {
    this.db = db;
    this.current = current;
  }

  /** `fromCli`, when given, replaces the stored graffiti (the command line wins at start-up). */
  static async load(db: BeaconDb, fromCli: Uint8Array | undefined): Promise<NodeSettings> {
    if (fromCli) await db.chainMeta.graffiti.put(fromCli);
    const stored = await db.chainMeta.graffiti.get();
    return new NodeSettings(db, stored ?? DEFAULT_GRAFFITI);
  }

  get graffiti(): Uint8Array {
    return this.current;
  }

  async setGraffiti(value: Uint8Array): Promise<void> {
    await this.db.chainMeta.graffiti.put(value);
    this.current = value;
  }

  feeRecipientOf(validatorIndex: number): Uint8Array {
    return this.feeRecipients.get(validatorIndex) ?? this.defaultFeeRecipient;
  }

  setDefaultFeeRecipient(address: Uint8Array): void {
    this.defaultFeeRecipient = address;
  }

  setFeeRecipient(validatorIndex: number, address: Uint8Array): void {
    this.feeRecipients.set(validatorIndex, address);
  }

  /** Keeps a validator's newest registration (by timestamp); an older one than kept is ignored. */
  setValidatorRegistration(registration: bellatrix.ValidatorRegistrationV1): void {
    const key = toHex(registration.pubkey);
    const kept = this.validatorRegistrations.get(key);
    if (!kept || kept.timestamp <= registration.timestamp) this.validatorRegistrations.set(key, registration);
  }

  /** What API handlers may see of the node. */
  apiView(version: string) {
    return {
      version,
      graffiti: () => this.graffiti,
      setGraffiti: (value: Uint8Array) => this.setGraffiti(value),
      setProposerFeeRecipient: (index: number, address: Uint8Array) => this.setFeeRecipient(index, address),
      setValidatorRegistration: (registration: bellatrix.ValidatorRegistrationV1) => this.setValidatorRegistration(registration),
    };
  }
}

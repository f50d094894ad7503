import type {ChainForkConfig} from "@lodestar/config";
import {type ForkName, ForkSeq, isForkPostDeneb} from "@lodestar/params";
import {type CachedBeaconStateAllForks, executionPayloadToPayloadHeader} from "@lodestar/state-transition";
import {type ExecutionPayload, type SignedBlindedBeaconBlock, type SignedBuilderBid, type deneb, ssz} from "@lodestar/types";
import {toPubkeyHex, toRootHex} from "@lodestar/utils";
import type {BlobsBundle, PayloadAttributes} from "../execution/engine.ts";
import {getLogger} from "../log.ts";
import {type BidExpectations, InvalidBidError, validateBid} from "./bidValidation.ts";
import {CircuitBreaker, type CircuitBreakerOptions} from "./circuitBreaker.ts";
import {BuilderClient, BuilderError} from "./client.ts";
import {RegistrationStore} from "./registrations.ts";
import {type SignedValidatorRegistration, isBuilderFork, payloadParts, relayPublishes} from "./types.ts";

const log = getLogger("builder");
/** Registrations per request to the relay. */
const REGISTRATION_BATCH = 1000;

export interface BuilderServiceOptions {
  /** the relay or MEV-boost endpoint (`--builder`) */
  url: string;
  /** `--builder-timeout`: how long a header is waited for */
  headerTimeoutMs: number;
  /** `--builder-boost-factor`: the percentage the builder's value is weighed with (100: as it is) */
  boostFactor: bigint;
  circuitBreaker: CircuitBreakerOptions;
  /** where the registrations are kept (null: in memory only) */
  registrationsFile: string | null;
  fetch?: typeof fetch;
}

/** Why a proposal has no builder bid, for the log and the metric. */
export type NoBidReason = "not_registered" | "circuit_breaker" | "no_bid" | "timeout" | "invalid_bid" | "relay_error" | "not_builder_fork";

/** What a proposal's bid must agree with that the chain knows (the rest comes from the registration). */
export interface BidContext {
  fork: ForkName;
  slot: number;
  proposerPubkey: Uint8Array;
  /** the proposal's pre-state (its parent's post-state advanced to the slot) */
  preState: CachedBeaconStateAllForks;
  parentHash: Uint8Array;
  parentBlockNumber: number;
  parentGasLimit: number;
  attributes: PayloadAttributes;
  maxBlobsPerBlock: number;
}

export type BidOutcome = {bid: SignedBuilderBid; version: ForkName} | {reason: NoBidReason; detail: string};

/** A relay failed to reveal the payload of a block its proposer signed: the block is lost unless the relay publishes it. */
export class UnblindError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UnblindError";
  }
}

/**
 * The node's side of external block building: keeps the validators' registrations and sends
 * them to the relay (at start, every epoch, and on change; a relay that refuses or is down is
 * retried at the next slot, nothing waits for it), asks the relay for a bid for each proposal
 * (unless the circuit breaker is tripped) and checks it, reveals blinded blocks through the relay,
 * and polls the relay's status every epoch.
 */
export class BuilderService {
  readonly client: BuilderClient;
  readonly boostFactor: bigint;
  private readonly config: ChainForkConfig;
  private readonly store: RegistrationStore;
  private readonly breaker: CircuitBreaker;
  /** with `--metrics` (metrics.ts): counts each proposal's choice */
  onChoice: ((source: "builder" | "local", reason: string) => void) | null = null;
  private sending: Promise<void> | null = null;
  private relayUp: boolean | null = null;

  constructor(config: ChainForkConfig, opts: BuilderServiceOptions) {
    this.config = config;
    this.client = new BuilderClient({url: opts.url, headerTimeoutMs: opts.headerTimeoutMs, fetch: opts.fetch});
    this.boostFactor = opts.boostFactor;
    this.store = new RegistrationStore(opts.registrationsFile);
    this.breaker = new CircuitBreaker(opts.circuitBreaker);
  }

  /** At start: the kept registrations go to the relay, and its status is read. */
  start(): void {
    log.info({url: this.client.url, registrations: this.store.size, boostFactor: String(this.boostFactor)}, "builder relay configured");
    this.store.returnPending(this.store.all());
    this.flushRegistrations();
    void this.pollStatus();
  }

  /** Every epoch: every registration again (relays forget), and the relay's status. */
  onEpoch(): void {
    this.store.returnPending(this.store.all());
    this.flushRegistrations();
    void this.pollStatus();
  }

  /** Every slot: registrations the relay did not take yet are tried again. */
  onSlot(): void {
    this.flushRegistrations();
  }

  /** A proposal's payload choice, for the metric. */
  countChoice(source: "builder" | "local", reason: string): void {
    this.onChoice?.(source, reason);
  }

  /** Whether the relay answered its last status request (null: not asked yet). */
  isRelayUp(): boolean | null {
    return this.relayUp;
  }

  get circuitBreakerTripped(): boolean {
    return this.breaker.isTripped;
  }

  /** A verified registration from a validator client; sent to the relay at once when it changes anything. */
  register(signed: SignedValidatorRegistration): void {
    if (!this.store.set(signed)) return;
    try {
      this.store.save();
    } catch (e) {
      log.error({err: (e as Error).message}, "could not save builder registrations");
    }
    queueMicrotask(() => this.flushRegistrations());
  }

  registrationOf(pubkey: Uint8Array): SignedValidatorRegistration | undefined {
    return this.store.get(pubkey);
  }

  /** The relay's bid for a proposal, checked; or why there is none. Never throws. */
  async getBid(ctx: BidContext): Promise<BidOutcome> {
    if (!isBuilderFork(ctx.fork)) return {reason: "not_builder_fork", detail: ctx.fork};
    const registration = this.store.get(ctx.proposerPubkey);
    if (!registration) return {reason: "not_registered", detail: toPubkeyHex(ctx.proposerPubkey)};
    const unhealthy = this.breaker.check(ctx.preState);
    if (unhealthy) return {reason: "circuit_breaker", detail: unhealthy};
    let got: {version: ForkName; bid: SignedBuilderBid} | null;
    try {
      got = await this.client.getHeader(ctx.slot, ctx.parentHash, ctx.proposerPubkey);
    } catch (e) {
      const timedOut = e instanceof BuilderError && e.timedOut;
      return {reason: timedOut ? "timeout" : "relay_error", detail: (e as Error).message};
    }
    if (!got) return {reason: "no_bid", detail: "the relay answered 204"};
    const withdrawals = ctx.attributes.withdrawals;
    const expectations: BidExpectations = {
      fork: ctx.fork,
      parentHash: ctx.parentHash,
      parentBlockNumber: ctx.parentBlockNumber,
      parentGasLimit: ctx.parentGasLimit,
      timestamp: ctx.attributes.timestamp,
      prevRandao: ctx.attributes.prevRandao,
      withdrawalsRoot: withdrawals ? ssz.capella.Withdrawals.hashTreeRoot(withdrawals) : null,
      feeRecipient: registration.message.feeRecipient,
      registeredGasLimit: registration.message.gasLimit,
      maxBlobsPerBlock: ctx.maxBlobsPerBlock,
    };
    try {
      validateBid(this.config, got.version, got.bid, expectations);
    } catch (e) {
      if (e instanceof InvalidBidError) return {reason: "invalid_bid", detail: e.message};
      throw e;
    }
    return got;
  }

  /**
   * Reveals a signed blinded block through the relay. Before fulu the relay returns the payload
   * (and blobs bundle), checked against the signed header and commitments; from fulu the relay
   * publishes the block itself ("published"). Throws UnblindError naming the relay's failure.
   */
  async unblind(fork: ForkName, signed: SignedBlindedBeaconBlock): Promise<{payload: ExecutionPayload; blobsBundle: BlobsBundle | null} | "published"> {
    const slot = signed.message.slot;
    const header = signed.message.body.executionPayloadHeader;
    try {
      if (relayPublishes(fork)) {
        await this.client.submitBlindedBlockV2(fork, signed);
        return "published";
      }
      const {payload, blobsBundle} = payloadParts(fork, await this.client.submitBlindedBlock(fork, signed));
      const headerType = this.config.getPostBellatrixForkTypes(slot).ExecutionPayloadHeader;
      const revealed = executionPayloadToPayloadHeader(ForkSeq[fork], payload);
      if (!Buffer.from(headerType.hashTreeRoot(revealed as never)).equals(headerType.hashTreeRoot(header as never))) {
        throw new UnblindError(`the relay revealed payload ${toRootHex(payload.blockHash)}, not the one of the signed header ${toRootHex(header.blockHash)}`);
      }
      if (isForkPostDeneb(fork)) {
        const commitments = (signed.message.body as deneb.BlindedBeaconBlockBody).blobKzgCommitments;
        const got = blobsBundle?.commitments ?? [];
        if (got.length !== commitments.length || got.some((c, i) => !Buffer.from(c).equals(commitments[i]))) {
          throw new UnblindError("the relay's blobs bundle does not match the block's blob commitments");
        }
      }
      return {payload, blobsBundle};
    } catch (e) {
      if (e instanceof UnblindError) throw e;
      throw new UnblindError(`the builder relay did not reveal the payload of slot ${slot}: ${(e as Error).message}`);
    }
  }

  /** Sends pending registrations in batches; one send at a time; what fails goes back to pending. */
  private flushRegistrations(): void {
    if (this.sending) return;
    const pending = this.store.takePending();
    if (pending.length === 0) return;
    this.sending = (async () => {
      for (let i = 0; i < pending.length; i += REGISTRATION_BATCH) {
        const batch = pending.slice(i, i + REGISTRATION_BATCH);
        try {
          await this.client.registerValidators(batch);
        } catch (e) {
          this.store.returnPending(pending.slice(i));
          log.warn({err: (e as Error).message, pending: pending.length - i}, "relay did not take the validator registrations; retrying next slot");
          return;
        }
      }
      log.debug({count: pending.length}, "validator registrations sent to the relay");
    })().finally(() => (this.sending = null));
  }

  private async pollStatus(): Promise<void> {
    let up = true;
    let reason = "";
    try {
      await this.client.status();
    } catch (e) {
      up = false;
      reason = (e as Error).message;
    }
    if (up !== this.relayUp) {
      if (up) log.info({url: this.client.url}, "builder relay is up");
      else log.warn({url: this.client.url, err: reason}, "builder relay is down: proposals build local payloads until it answers");
    }
    this.relayUp = up;
  }
}

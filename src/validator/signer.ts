import {PublicKey, type SecretKey, Signature, verify} from "@chainsafe/blst";
import type {Type} from "@chainsafe/ssz";
import type {BeaconConfig} from "@lodestar/config";
import {
  DOMAIN_AGGREGATE_AND_PROOF,
  DOMAIN_BEACON_ATTESTER,
  DOMAIN_BEACON_PROPOSER,
  DOMAIN_CONTRIBUTION_AND_PROOF,
  DOMAIN_RANDAO,
  DOMAIN_SELECTION_PROOF,
  DOMAIN_SYNC_COMMITTEE,
  DOMAIN_SYNC_COMMITTEE_SELECTION_PROOF,
  isForkPostElectra,
} from "@lodestar/params";
import {computeEpochAtSlot, computeSigningRoot, computeStartSlotAtEpoch, interopSecretKey} from "@lodestar/state-transition";
import {ssz} from "@lodestar/types";
import type {AggregateAndProof, BeaconBlock, BLSSignature, DomainType, Epoch, Root, SignedAggregateAndProof, SignedBeaconBlock, Slot, altair, bellatrix, phase0} from "@lodestar/types";
import {toHex} from "@lodestar/utils";
import {builderDomain} from "../execution/validatorRegistration.ts";
import {LoopTurns, StepCost} from "../loopTurns.ts";
import {type RemoteSignerClient, RemoteSignerError} from "./remote/client.ts";
import {type SignableMessage, signingRequestBody} from "./remote/signingRequests.ts";
import type {SlashingProtection} from "./slashingProtection.ts";

/** what a signature is first taken to cost on the event loop, until signatures have been timed */
const INITIAL_MS_PER_SIGNATURE = 0.4;
/** what checking a remote signer's signature is first taken to cost */
const INITIAL_MS_PER_VERIFICATION = 1.5;

/** A key held here (its secret key) or by a remote signer (Web3Signer's API). */
type SigningKey =
  | {pubkey: Uint8Array; secretKey: SecretKey; remote?: undefined}
  /** `publicKey`: decoded and checked once (a millisecond each time otherwise), for the checks of the signer's answers */
  | {pubkey: Uint8Array; remote: RemoteSignerClient; publicKey: PublicKey; secretKey?: undefined};

/**
 * The one place where validator messages are signed. Every domain uses the fork version of
 * the message's own epoch (`config.getDomain` at the epoch's first slot, with the genesis
 * validators root baked into the BeaconConfig). Blocks and attestations go through slashing
 * protection first: their signature is computed only once the record is on disk. Secret-key
 * signatures run a few milliseconds' worth per turn of the event loop (`LoopTurns`), so that a
 * slot's signing never holds the node's REST API and gossip for long: ask for a slot's
 * signatures together, not one after another, or each waits a turn of its own.
 *
 * A remote key's signature is asked of its remote signer with the message's typed request
 * (remote/signingRequests.ts), after slashing protection has recorded it, as for a local key
 * (and only once the signer is known to be up: a signer found down fails the duty with nothing
 * recorded); the answer is used only once it verifies against the key and the signing root.
 */
export class ValidatorSigner {
  readonly config: BeaconConfig;
  private readonly protection: SlashingProtection;
  private readonly keys = new Map<string, SigningKey>();
  private readonly turns: LoopTurns;
  /** a signature's time on the event loop: turns of signatures end within their budget */
  private readonly signatureCost = new StepCost(INITIAL_MS_PER_SIGNATURE);
  private readonly verificationCost = new StepCost(INITIAL_MS_PER_VERIFICATION);

  constructor(config: BeaconConfig, secretKeys: SecretKey[], protection: SlashingProtection, turns = new LoopTurns()) {
    this.config = config;
    this.protection = protection;
    this.turns = turns;
    for (const sk of secretKeys) this.addKey(sk);
  }

  /** Signs with this key from now on; resolves to its public key. */
  addKey(secretKey: SecretKey): Uint8Array {
    const pubkey = secretKey.toPublicKey().toBytes();
    this.keys.set(toHex(pubkey), {secretKey, pubkey});
    return pubkey;
  }

  /** Signs with this key through its remote signer from now on (a local key of the same pubkey is replaced). */
  addRemoteKey(pubkey: Uint8Array, remote: RemoteSignerClient): void {
    this.keys.set(toHex(pubkey), {pubkey, remote, publicKey: PublicKey.fromBytes(pubkey, true)});
  }

  /** Signs nothing more with this key (a signature waiting for its turn is not made either); false if it was not here. */
  removeKey(pubkeyHex: string): boolean {
    return this.keys.delete(pubkeyHex);
  }

  has(pubkey: Uint8Array): boolean {
    return this.keys.has(toHex(pubkey));
  }

  /** A signer over the interop (mock-genesis) keys with these indices. */
  static fromInteropIndices(config: BeaconConfig, indices: number[], protection: SlashingProtection, turns?: LoopTurns): ValidatorSigner {
    return new ValidatorSigner(config, indices.map((i) => interopSecretKey(i)), protection, turns);
  }

  /** The compressed public keys, in the order the secret keys were added. */
  get pubkeys(): Uint8Array[] {
    return [...this.keys.values()].map((k) => k.pubkey);
  }

  /** The signature domain of `domainType` for a message of `epoch`. */
  domain(domainType: DomainType, epoch: Epoch): Uint8Array {
    return this.config.getDomain(computeStartSlotAtEpoch(epoch), domainType);
  }

  signRandaoReveal(pubkey: Uint8Array, epoch: Epoch): Promise<BLSSignature> {
    return this.sign(pubkey, ssz.Epoch, epoch, DOMAIN_RANDAO, epoch, {type: "RANDAO_REVEAL", epoch});
  }

  /** Signs a block after recording it in slashing protection; throws SlashingProtectionError when it is slashable. */
  async signBlock(pubkey: Uint8Array, block: BeaconBlock): Promise<SignedBeaconBlock> {
    // a blinded block (builder mode) has its full block's root: one slashing protection record serves both
    const blinded = "executionPayloadHeader" in block.body;
    const type = (blinded ? this.config.getPostBellatrixForkTypes(block.slot).BlindedBeaconBlock : this.config.getForkTypes(block.slot).BeaconBlock) as Type<BeaconBlock>;
    const signingRoot = this.signingRoot(type, block, DOMAIN_BEACON_PROPOSER, computeEpochAtSlot(block.slot));
    await this.requireKey(pubkey).remote?.checkUp();
    await this.protection.checkAndInsertBlockProposal(pubkey, block.slot, signingRoot);
    return {message: block, signature: await this.signRoot(pubkey, signingRoot, {type: "BLOCK_V2", block})} as SignedBeaconBlock;
  }

  /** Signs attestation data after recording it in slashing protection; throws SlashingProtectionError when it is slashable. */
  async signAttestationData(pubkey: Uint8Array, data: phase0.AttestationData): Promise<BLSSignature> {
    const signingRoot = this.signingRoot(ssz.phase0.AttestationData, data, DOMAIN_BEACON_ATTESTER, data.target.epoch);
    await this.requireKey(pubkey).remote?.checkUp();
    await this.protection.checkAndInsertAttestation(pubkey, {sourceEpoch: data.source.epoch, targetEpoch: data.target.epoch, signingRoot});
    return this.signRoot(pubkey, signingRoot, {type: "ATTESTATION", data});
  }

  /** The attestation aggregator's slot signature (phase0 `get_slot_signature`). */
  signSelectionProof(pubkey: Uint8Array, slot: Slot): Promise<BLSSignature> {
    return this.sign(pubkey, ssz.Slot, slot, DOMAIN_SELECTION_PROOF, computeEpochAtSlot(slot), {type: "AGGREGATION_SLOT", slot});
  }

  async signAggregateAndProof(pubkey: Uint8Array, message: AggregateAndProof): Promise<SignedAggregateAndProof> {
    const slot = message.aggregate.data.slot;
    const type = (isForkPostElectra(this.config.getForkName(slot)) ? ssz.electra.AggregateAndProof : ssz.phase0.AggregateAndProof) as Type<AggregateAndProof>;
    const signature = await this.sign(pubkey, type, message, DOMAIN_AGGREGATE_AND_PROOF, computeEpochAtSlot(slot), {type: "AGGREGATE_AND_PROOF", message});
    return {message, signature} as SignedAggregateAndProof;
  }

  signSyncCommitteeMessage(pubkey: Uint8Array, slot: Slot, beaconBlockRoot: Root): Promise<BLSSignature> {
    return this.sign(pubkey, ssz.Root, beaconBlockRoot, DOMAIN_SYNC_COMMITTEE, computeEpochAtSlot(slot), {type: "SYNC_COMMITTEE_MESSAGE", slot, beaconBlockRoot});
  }

  /** The sync aggregator's selection proof (altair `get_sync_committee_selection_proof`). */
  signSyncSelectionProof(pubkey: Uint8Array, slot: Slot, subcommitteeIndex: number): Promise<BLSSignature> {
    const data = {slot, subcommitteeIndex};
    const message: SignableMessage = {type: "SYNC_COMMITTEE_SELECTION_PROOF", slot, subcommitteeIndex};
    return this.sign(pubkey, ssz.altair.SyncAggregatorSelectionData, data, DOMAIN_SYNC_COMMITTEE_SELECTION_PROOF, computeEpochAtSlot(slot), message);
  }

  async signContributionAndProof(pubkey: Uint8Array, message: altair.ContributionAndProof): Promise<altair.SignedContributionAndProof> {
    const epoch = computeEpochAtSlot(message.contribution.slot);
    const request: SignableMessage = {type: "SYNC_COMMITTEE_CONTRIBUTION_AND_PROOF", message};
    return {message, signature: await this.sign(pubkey, ssz.altair.ContributionAndProof, message, DOMAIN_CONTRIBUTION_AND_PROOF, epoch, request)};
  }

  /** A voluntary exit, in the domain of its epoch's fork (capella's from deneb on: EIP-7044). */
  async signVoluntaryExit(pubkey: Uint8Array, exit: phase0.VoluntaryExit): Promise<phase0.SignedVoluntaryExit> {
    const domain = this.config.getDomainForVoluntaryExit(computeStartSlotAtEpoch(exit.epoch));
    const signingRoot = computeSigningRoot(ssz.phase0.VoluntaryExit, exit, domain);
    return {message: exit, signature: await this.signRoot(pubkey, signingRoot, {type: "VOLUNTARY_EXIT", exit})};
  }

  /** A builder registration, in the builder domain (builder-specs: genesis fork version, zero validators root). */
  async signValidatorRegistration(message: bellatrix.ValidatorRegistrationV1): Promise<bellatrix.SignedValidatorRegistrationV1> {
    const signingRoot = computeSigningRoot(ssz.bellatrix.ValidatorRegistrationV1, message, builderDomain(this.config));
    return {message, signature: await this.signRoot(message.pubkey, signingRoot, {type: "VALIDATOR_REGISTRATION", registration: message})};
  }

  private sign<T>(pubkey: Uint8Array, type: Type<T>, value: T, domainType: DomainType, epoch: Epoch, message: SignableMessage): Promise<BLSSignature> {
    return this.signRoot(pubkey, this.signingRoot(type, value, domainType, epoch), message);
  }

  private signingRoot<T>(type: Type<T>, value: T, domainType: DomainType, epoch: Epoch): Uint8Array {
    return computeSigningRoot(type, value, this.domain(domainType, epoch));
  }

  /** Throws for a key this signer does not hold (any more): a removed key adds no slashing protection record either. */
  private requireKey(pubkey: Uint8Array): SigningKey {
    const key = this.keys.get(toHex(pubkey));
    if (!key) throw new Error(`no secret key for pubkey ${toHex(pubkey)}`);
    return key;
  }

  private async signRoot(pubkey: Uint8Array, signingRoot: Uint8Array, message: SignableMessage): Promise<BLSSignature> {
    const key = this.requireKey(pubkey);
    if (key.remote) return this.signRemotely(key, signingRoot, message);
    // looked up again at the turn: a key removed meanwhile signs nothing
    return this.turns.run(
      () =>
        this.signatureCost.time(() => {
          const {secretKey} = this.requireKey(pubkey);
          if (!secretKey) throw new Error(`the key ${toHex(pubkey)} was moved to a remote signer`);
          return secretKey.sign(signingRoot).toBytes();
        }),
      () => this.signatureCost.ms
    );
  }

  /** The remote signer's signature, once it verifies against the key and the root; a key removed meanwhile signs nothing. */
  private async signRemotely(key: SigningKey & {remote: RemoteSignerClient}, signingRoot: Uint8Array, message: SignableMessage): Promise<BLSSignature> {
    const {remote, publicKey} = key;
    const pubkeyHex = toHex(key.pubkey);
    const signature = await remote.sign(pubkeyHex, signingRequestBody(this.config, message, signingRoot));
    const valid = await this.turns.run(
      () => this.verificationCost.time(() => this.keys.get(pubkeyHex)?.remote === remote && isValidSignature(signingRoot, publicKey, signature)),
      () => this.verificationCost.ms
    );
    if (!valid) {
      if (this.keys.get(pubkeyHex)?.remote !== remote) throw new Error(`the key ${pubkeyHex} was removed while its remote signer signed`);
      throw new RemoteSignerError(`remote signer ${remote.url} returned a ${message.type} signature that does not verify against ${pubkeyHex} and the signing root: discarded`);
    }
    return signature;
  }
}

/** Whether `signature` (bytes, checked to be a point of the group) over `signingRoot` is by `publicKey`. */
function isValidSignature(signingRoot: Uint8Array, publicKey: PublicKey, signature: Uint8Array): boolean {
  try {
    return verify(signingRoot, publicKey, Signature.fromBytes(signature, true));
  } catch {
    return false;
  }
}

import {type CommandSpec, option} from "./optionTable.ts";

/** `beacon-gateway db check|repair`: their options, each described once (src/cli/optionTable.ts). */

export interface DbCommandOptions {
  dataDir: string;
}

const dataDir = option({
  name: "data-dir",
  value: "DIR",
  required: true,
  help: "the node's data dir (`node --data-dir`): its database is in DIR/beacon",
  parse: (text) => text,
});

const ABOUT_STOPPED = "The node using the data dir must be stopped first. The chain (network, preset, forks) is read\nfrom the database itself.";

export const DB_CHECK_COMMAND: CommandSpec<DbCommandOptions> = {
  usage: "beacon-gateway db check --data-dir DIR",
  about: `Reads every record of the node's database and reports what is damaged: files LevelDB cannot
read, values that do not decode, blocks and states whose hash_tree_root is not their key, index
entries pointing to missing blocks, missing chain meta. Exits 0 when the database is whole, 1
with the list otherwise.
${ABOUT_STOPPED}`,
  options: {dataDir},
};

export const DB_REPAIR_COMMAND: CommandSpec<DbCommandOptions> = {
  usage: "beacon-gateway db repair --data-dir DIR",
  about: `Repairs the node's database: LevelDB's repair first (it drops what it cannot read), then every
damaged record is dropped and, where the unfinalized part of the chain is lost or damaged, the
chain rolls back to the last whole finalized state; the node then syncs forward from its peers.
Refuses when the validators' slashing protection (DIR/validator/slashing-protection) is
damaged: it is never rolled back, restore it or import an interchange file.
${ABOUT_STOPPED}`,
  options: {dataDir},
};

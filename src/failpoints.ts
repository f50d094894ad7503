/**
 * Crash points for tests: `BEACON_GATEWAY_FAILPOINT=<name>@<slot>` makes the process kill
 * itself (SIGKILL, no clean-up) when it reaches that point for that slot, and
 * `<name>@>=<slot>` at the first slot from that one on that reaches it (a test that cannot
 * know which slots will get a block: a node that starts late skips the slots already past),
 * so tests can prove that a crash at the worst moment leaves a database that opens and a
 * chain that continues. Unset, this costs one comparison.
 */
const armed = parseFailpoint(process.env.BEACON_GATEWAY_FAILPOINT);

function parseFailpoint(text: string | undefined): {name: string; slot: number; orLater: boolean} | null {
  const match = text === undefined ? null : /^(.+)@(>=)?(\d+)$/.exec(text);
  return match ? {name: match[1], slot: Number(match[3]), orLater: match[2] !== undefined} : null;
}

export function failpoint(name: string, slot: number): void {
  if (armed !== null && armed.name === name && (armed.orLater ? slot >= armed.slot : slot === armed.slot)) process.kill(process.pid, "SIGKILL");
}

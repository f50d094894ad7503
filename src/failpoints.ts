/**
 * Crash points for tests: `BEACON_GATEWAY_FAILPOINT=<name>@<slot>` makes the process kill
 * itself (SIGKILL, no clean-up) when it reaches that point for that slot, so tests can
 * prove that a crash at the worst moment leaves a database that opens and a chain that
 * continues. Unset, this costs one string comparison.
 */
const armed = process.env.BEACON_GATEWAY_FAILPOINT ?? null;

export function failpoint(name: string, slot: number): void {
  if (armed !== null && armed === `${name}@${slot}`) process.kill(process.pid, "SIGKILL");
}

/**
 * Stop signals that come while the commands' modules load (a second and more on a slow machine:
 * the whole service is imported), held for the command. Before any handler was installed, Node's
 * default action ended the process at once (exit 143), where a signal during start-up is to stop
 * it once started. This module imports nothing, so it is evaluated first.
 */
const SIGNALS = ["SIGTERM", "SIGINT", "SIGHUP"] as const;
const held: NodeJS.Signals[] = [];
const hold = (signal: NodeJS.Signals) => {
  held.push(signal);
};

export function holdStopSignals(): void {
  for (const s of SIGNALS) process.on(s, hold);
}

/** The signals held so far; from now on only the caller's own handlers hear them. */
export function takeHeldSignals(): NodeJS.Signals[] {
  for (const s of SIGNALS) process.off(s, hold);
  return held.splice(0);
}

// The command-line entry. Stop signals are held from the first moment (src/cli/early-signals.ts),
// then the commands load and run.
import { holdStopSignals } from "./early-signals.js";

holdStopSignals();
await import("./commands.js");

import { pino } from "pino";

export type Logger = pino.Logger;

/**
 * Structured JSON logs. `stream: "stderr"` is used by the MCP stdio role, where stdout is the
 * protocol and must never carry a log line.
 */
export function createLogger(options: { level: string; stream?: "stdout" | "stderr" }): Logger {
  const fd = options.stream === "stderr" ? 2 : 1;
  return pino(
    { level: options.level, base: { service: "mnemo" }, timestamp: pino.stdTimeFunctions.isoTime },
    pino.destination({ fd, sync: false }),
  );
}

/** A logger that drops everything, for tests and tools that want quiet. */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}

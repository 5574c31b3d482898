import { pino } from "pino";

export type Logger = pino.Logger;

/**
 * Structured JSON logs, one object a line. `stream: "stderr"` is used by the MCP stdio role, where
 * stdout is the protocol and must never carry a log line. `format: "pretty"` (LOG_FORMAT) renders
 * each line for a terminal instead: time, level, message, then the fields as key=value.
 */
export function createLogger(options: {
  level: string;
  stream?: "stdout" | "stderr";
  format?: "json" | "pretty";
}): Logger {
  const fd = options.stream === "stderr" ? 2 : 1;
  const base = { level: options.level, base: { service: "mnemo" }, timestamp: pino.stdTimeFunctions.isoTime };
  if (options.format === "pretty") {
    const out = fd === 2 ? process.stderr : process.stdout;
    return pino(base, { write: (line: string) => out.write(prettyLine(line, out.isTTY === true)) });
  }
  return pino(base, pino.destination({ fd, sync: false }));
}

const LEVELS: Record<number, [string, string]> = {
  10: ["TRACE", "90"],
  20: ["DEBUG", "36"],
  30: ["INFO ", "32"],
  40: ["WARN ", "33"],
  50: ["ERROR", "31"],
  60: ["FATAL", "35"],
};

/** One JSON log line as `12:00:01.234 INFO  message key=value ...` (colours on a terminal). */
export function prettyLine(line: string, colour: boolean): string {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(line);
  } catch {
    return line;
  }
  const { time, level, msg, service: _service, pid: _pid, hostname: _hostname, err, ...rest } = o;
  const [name, code] = LEVELS[level as number] ?? [String(level), "0"];
  const clock = typeof time === "string" ? time.slice(11, 23) : "";
  const fields = Object.entries(rest)
    .map(([k, v]) => `${k}=${typeof v === "string" && !/\s/.test(v) ? v : JSON.stringify(v)}`)
    .join(" ");
  const lvl = colour ? `\x1b[${code}m${name}\x1b[0m` : name;
  const stack =
    err && typeof err === "object" && "stack" in err ? `\n${String((err as { stack: unknown }).stack)}` : "";
  return `${clock} ${lvl} ${msg ?? ""}${fields ? ` ${fields}` : ""}${stack}\n`;
}

/** A logger that drops everything, for tests and tools that want quiet. */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}

/**
 * A warning that would come once per request or poll while a dependency is away: written once
 * per `ms` at most, each line counting in `sinceLastLine` the ones left out since the last.
 */
export function throttledWarning(msg: string, ms = 10_000) {
  let quietUntil = 0;
  let unlogged = 0;
  const warn = (log: Logger, fields: Record<string, unknown>) => {
    if (Date.now() < quietUntil) return void unlogged++;
    quietUntil = Date.now() + ms;
    log.warn({ ...fields, sinceLastLine: unlogged }, msg);
    unlogged = 0;
  };
  /** Writes the next one at once (a test that counts lines, whatever a test before it logged). */
  const reset = () => {
    quietUntil = 0;
    unlogged = 0;
  };
  return Object.assign(warn, { reset });
}

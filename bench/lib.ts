import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadConfig } from "../src/config.js";
import { createLogger } from "../src/logger.js";
import { type Runtime, startRuntime } from "../src/runtime.js";

/** A whole service on a throw-away embedded database, serving real HTTP on a free port. */
export async function startBenchService(
  env: Record<string, string> = {},
  worker = true,
): Promise<{
  runtime: Runtime;
  url: string;
  stop(): Promise<void>;
}> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "mnemo-bench-"));
  const config = loadConfig({ LOG_LEVEL: "warn", MNEMO_DATA_DIR: dir, PORT: "0", ...env });
  const runtime = await startRuntime(config, createLogger({ level: "warn", stream: "stderr" }), {
    api: true,
    worker,
  });
  return {
    runtime,
    url: runtime.url!,
    async stop() {
      await runtime.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** JSON over HTTP with a key; a 429 waits for Retry-After and tries again. */
export async function call(
  url: string,
  key: string,
  method: string,
  p: string,
  body?: unknown,
): Promise<any> {
  for (;;) {
    const res = await fetch(`${url}${p}`, {
      method,
      headers: { "x-api-key": key, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (res.status === 429) {
      const wait = Number(res.headers.get("retry-after") ?? "1");
      await new Promise((r) => setTimeout(r, Math.max(0.2, wait) * 1000));
      continue;
    }
    if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${text.slice(0, 300)}`);
    return text ? JSON.parse(text) : undefined;
  }
}

export function percentile(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? Number.NaN;
}

/** A one-line progress bar on stderr. */
export function progress(label: string, total: number) {
  let last = 0;
  return (done: number) => {
    const now = Date.now();
    if (done < total && now - last < 200) return;
    last = now;
    const width = 30;
    const filled = Math.round((done / Math.max(total, 1)) * width);
    process.stderr.write(
      `\r${label} [${"#".repeat(filled)}${"-".repeat(width - filled)}] ${done}/${total}${done >= total ? "\n" : ""}`,
    );
  };
}

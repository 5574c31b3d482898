import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { waitFor } from "./harness.js";

export const ROOT = path.resolve(import.meta.dirname, "../..");
export const TSX = path.join(ROOT, "node_modules/.bin/tsx");

/** The child's environment: only what it needs, with this Node (24) first on PATH for tsx. */
export function childEnv(extra: Record<string, string>): Record<string, string> {
  return {
    PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ""}`,
    HOME: process.env.HOME ?? os.tmpdir(),
    LOG_LEVEL: "warn",
    ...extra,
  };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export interface ServerProcess {
  url: string;
  key: string;
  dataDir: string;
  stop(): Promise<void>;
}

/** The real binary (`mnemo serve`) on a temp data dir and a free port, with a known bootstrap key. */
export async function startServerProcess(env: Record<string, string> = {}): Promise<ServerProcess> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "mnemo-proc-"));
  const port = await freePort();
  const key = `mnemo_test_${Math.random().toString(36).slice(2)}_bootstrap_key`;
  const child: ChildProcess = spawn(TSX, ["src/cli/main.ts", "serve"], {
    cwd: ROOT,
    env: childEnv({
      PORT: String(port),
      HOST: "127.0.0.1",
      MNEMO_DATA_DIR: dataDir,
      MNEMO_BOOTSTRAP_API_KEY: key,
      ...env,
    }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (d) => {
    output += d;
  });
  child.stderr?.on("data", (d) => {
    output += d;
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`server exited early:\n${output}`);
        return fetch(`${url}/healthz`)
          .then((r) => r.ok)
          .catch(() => false);
      },
      { timeoutMs: 60_000, intervalMs: 100 },
    );
  } catch (err) {
    child.kill("SIGKILL");
    throw err;
  }
  return {
    url,
    key,
    dataDir,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        await exited;
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

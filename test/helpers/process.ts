import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

export const ROOT = path.resolve(import.meta.dirname, "../..");
const TSX_CLI = path.join(ROOT, "node_modules/tsx/dist/cli.mjs");
/** tsx's launcher, for clients that spawn the binary themselves (the MCP SDK's stdio transport). */
export const TSX = path.join(ROOT, "node_modules/.bin/tsx");

/** A child's environment: only what it needs, with this Node (24) first on PATH for tsx. */
export function childEnv(extra: Record<string, string | undefined>): Record<string, string> {
  const env: Record<string, string> = {
    PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ""}`,
    HOME: process.env.HOME ?? os.tmpdir(),
    LOG_LEVEL: "info",
  };
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) env[k] = v;
  return env;
}

/** A free loopback port (bound and released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

export interface MnemoProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first match of `re` in stdout+stderr, or rejects on exit/timeout. */
  waitFor(re: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
  kill(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Runs the real entry point (`src/cli/main.ts`) on this Node, as `npm start` would. */
export function spawnMnemo(args: string[], env: Record<string, string | undefined>): MnemoProcess {
  const child = spawn(process.execPath, [TSX_CLI, "src/cli/main.ts", ...args], {
    cwd: ROOT,
    env: childEnv(env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  const listeners = new Set<() => void>();
  child.stdout!.on("data", (d) => {
    out += d;
    for (const l of listeners) l();
  });
  child.stderr!.on("data", (d) => {
    err += d;
    for (const l of listeners) l();
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitFor(re, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = (out + err).match(re);
          if (m) {
            cleanup();
            resolve(m);
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`timed out waiting for ${re}\nstdout:\n${out}\nstderr:\n${err}`));
        }, timeoutMs);
        const onExit = () => {
          check();
          cleanup();
          reject(new Error(`process exited before ${re}\nstdout:\n${out}\nstderr:\n${err}`));
        };
        const cleanup = () => {
          clearTimeout(timer);
          listeners.delete(check);
          child.off("exit", onExit);
        };
        listeners.add(check);
        child.once("exit", onExit);
        check();
      });
    },
    async kill(signal = "SIGTERM") {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Runs the CLI to completion and returns its output. */
export async function runMnemo(args: string[], env: Record<string, string | undefined>) {
  const p = spawnMnemo(args, env);
  const code = await p.exited;
  return { code, stdout: p.stdout(), stderr: p.stderr() };
}

export interface ServerProcess {
  url: string;
  key: string;
  dataDir: string;
  process: MnemoProcess;
  stop(): Promise<void>;
}

/** The real binary (`mnemo serve`) on a temp data dir and a free port, with a known bootstrap key. */
export async function startServerProcess(env: Record<string, string> = {}): Promise<ServerProcess> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "mnemo-proc-"));
  const port = await freePort();
  const key = `mnemo_test_${Math.random().toString(36).slice(2)}_bootstrap_key`;
  const p = spawnMnemo(["serve"], {
    PORT: String(port),
    HOST: "127.0.0.1",
    MNEMO_DATA_DIR: dataDir,
    MNEMO_BOOTSTRAP_API_KEY: key,
    ...env,
  });
  try {
    await p.waitFor(/"msg":"ready"/);
  } catch (err) {
    await p.kill("SIGKILL");
    throw err;
  }
  return {
    url: `http://127.0.0.1:${port}`,
    key,
    dataDir,
    process: p,
    async stop() {
      await p.kill("SIGTERM");
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

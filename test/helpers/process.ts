import { type ChildProcess, spawn } from "node:child_process";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { inject } from "vitest";
import { freePort } from "../../bench/lib.js";
import { findRunningServer } from "../../src/db/embedded.js";
import { createTestDatabase, onServer } from "./test-db.js";

export const ROOT = path.resolve(import.meta.dirname, "../..");
/**
 * The entry point as child processes run it: compiled once per run by the global setup
 * (test/helpers/global-setup.ts) into dist-test/, as `npm start` runs dist/. A start through tsx's
 * hooks cost about 0.7 s more CPU, and the suite starts a few hundred processes; dist/ itself is
 * left to `npm start` (its prestart build rewrites it while a test runs).
 */
export const MAIN = path.join(ROOT, "dist-test/src/cli/main.js");

/** A child's environment: only what it needs, with this Node (24) first on PATH. */
export function childEnv(extra: Record<string, string | undefined>): Record<string, string> {
  const env: Record<string, string> = {
    PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ""}`,
    HOME: process.env.HOME ?? os.tmpdir(),
    LOG_LEVEL: "info",
  };
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) env[k] = v;
  return env;
}

/**
 * A new data directory for a real server process. On the embedded database it holds a copy of the
 * run's migrated database (test/helpers/global-setup.ts), so the process skips creating and
 * migrating one (about 3 s of CPU a start); on a PostgreSQL server it is empty and unused. Tests
 * of a first start on an empty directory make their own.
 */
export function migratedDataDir(prefix = "mnemo-proc-"): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  const template = inject("templateDataDir");
  if (template) cpSync(path.join(template, "pgdata"), path.join(dir, "pgdata"), { recursive: true });
  return dir;
}

/**
 * A new data directory holding an empty embedded database (initdb run, nothing migrated: a copy of
 * the run's, test/helpers/global-setup.ts): for a test of a start-up that migrates, which then
 * skips PGlite's initdb (seconds of CPU) but not one migration. Embedded pass only.
 */
export function unmigratedDataDir(prefix = "mnemo-proc-"): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  cpSync(path.join(inject("bareDataDir"), "pgdata"), path.join(dir, "pgdata"), { recursive: true });
  return dir;
}

/** A free loopback port: the benchmarks' helper (bench/lib.ts). */
export { freePort };

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

/**
 * Runs the real entry point (compiled, MAIN) on this Node, as one process (no launcher in
 * between), so that signals reach the server itself.
 */
export function spawnMnemo(
  args: string[],
  env: Record<string, string | undefined>,
  options: { direct?: boolean; stdin?: string; fileSizeLimit?: number } = {},
): MnemoProcess {
  const node = [process.execPath, MAIN, ...args];
  // A file size limit (RLIMIT_FSIZE) through util-linux's prlimit, which runs node in its own
  // place (same pid): a write past it fails with EFBIG (Node ignores SIGXFSZ), as on a full disk.
  const [command, ...argv] =
    options.fileSizeLimit === undefined
      ? node
      : ["prlimit", `--fsize=${options.fileSizeLimit}`, "--", ...node];
  const child = spawn(command!, argv, {
    cwd: ROOT,
    env: childEnv(env),
    stdio: [options.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"],
  });
  if (options.stdin !== undefined) child.stdin!.end(options.stdin);
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
  // "close", not "exit": it comes once the output pipes are read to their end as well, so what
  // a test reads after the exit is everything the process wrote.
  const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitFor(re, timeoutMs = 150_000) {
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
          child.off("close", onExit);
        };
        listeners.add(check);
        child.once("close", onExit);
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
export async function runMnemo(
  args: string[],
  env: Record<string, string | undefined>,
  options: { stdin?: string } = {},
) {
  const p = spawnMnemo(args, env, options);
  const code = await p.exited;
  return { code, stdout: p.stdout(), stderr: p.stderr() };
}

export interface ServerProcess {
  url: string;
  key: string;
  dataDir: string;
  /** The database the server runs on (a server database, or the embedded one it serves). */
  databaseUrl: string;
  process: MnemoProcess;
  stop(): Promise<void>;
}

/**
 * The real binary (`mnemo serve`) on a free port, with a known bootstrap key: on a fresh data
 * directory, or with MNEMO_TEST_DATABASE_URL on a fresh copy of the template database there.
 */
export async function startServerProcess(env: Record<string, string> = {}): Promise<ServerProcess> {
  const dataDir = migratedDataDir();
  const port = await freePort();
  const key = `mnemo_test_${Math.random().toString(36).slice(2)}_bootstrap_key`;
  const serverDb = onServer() ? await createTestDatabase() : undefined;
  const p = spawnMnemo(["serve"], {
    PORT: String(port),
    HOST: "127.0.0.1",
    MNEMO_DATA_DIR: dataDir,
    MNEMO_BOOTSTRAP_API_KEY: key,
    ...(serverDb ? { DATABASE_URL: serverDb.url } : {}),
    ...env,
  });
  try {
    await p.waitFor(/"msg":"ready"/);
  } catch (err) {
    await p.kill("SIGKILL");
    await serverDb?.drop();
    throw err;
  }
  const databaseUrl = serverDb?.url ?? (await findRunningServer(dataDir));
  if (!databaseUrl) throw new Error("the server process records no database address");
  return {
    url: `http://127.0.0.1:${port}`,
    key,
    dataDir,
    databaseUrl,
    process: p,
    async stop() {
      await p.kill("SIGTERM");
      await serverDb?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { Worker } from "node:worker_threads";
import { type DirLock, LOCK_FILE, tryLockDir } from "./dir-lock.js";
import type { FromWorker, ToWorker, WorkerInput } from "./pglite-worker.js";

/**
 * The embedded database: PGlite (PostgreSQL in WebAssembly, with pgvector) persisted in a data
 * directory, run in its own worker thread and served over the Postgres wire protocol on a Unix
 * socket, so that `pg`, pg-boss and `psql` all speak to it as to a server.
 *
 * One process owns a data directory: the one holding its lock (dir-lock.ts). Only the owner
 * opens PGlite, creates the socket and removes it; it records itself in `server.json`. Every
 * other process attaches to the owner through the socket, or, when the owner never comes up,
 * refuses to start, naming the owner's PID.
 */
export interface EmbeddedServer {
  connectionString: string;
  /** How a human reaches it with psql. */
  psqlHint: string;
  /** A gzipped dump of the whole database (test templates). */
  dump(): Promise<Blob>;
  /** Closes the socket and the database, then releases the directory. Idempotent. */
  stop(): Promise<void>;
}

const SERVER_FILE = "server.json";
const SOCKET_NAME = ".s.PGSQL.5432";

/** What the owner of a data directory records about itself. */
export interface OwnerRecord {
  pid: number;
  socketDir?: string;
  /** A short-lived owner (an admin command): servers wait for it to finish instead of attaching. */
  transient?: boolean;
}

/** The data directory's database files would not open: damaged or incomplete. */
export class DataDirUnopenable extends Error {
  constructor(
    readonly dataDir: string,
    readonly reason: string,
  ) {
    super(
      `cannot open the embedded database in ${dataDir}: ${reason}. Most often the directory's files are ` +
        "damaged or incomplete (copied while a server was running, a disk error, a power loss): keep a copy " +
        "of the directory as it is, then restore it from a backup (stop the server, copy the directory back).",
    );
  }
}

export class DirectoryInUse extends Error {
  override name = "DirectoryInUse";
  constructor(
    readonly dataDir: string,
    readonly ownerPid: number | undefined,
    /** The owner is an admin command (export, import...), which a server waits for. */
    readonly byCommand = false,
    waitedMs?: number,
  ) {
    const pid = ownerPid ? ` (PID ${ownerPid})` : "";
    super(
      byCommand
        ? `the data directory ${dataDir} is held by an admin command${pid}, which did not finish ` +
            `within MNEMO_OWNER_WAIT_MS${waitedMs !== undefined ? ` (${waitedMs} ms)` : ""}; ` +
            "start the server once it has finished, or set MNEMO_OWNER_WAIT_MS higher"
        : `the data directory ${dataDir} is in use by another process${pid}, which is not serving it; ` +
            "stop that process or set MNEMO_DATA_DIR to another directory",
    );
  }
}

/**
 * The directory holds files, none of them Mnemo's: most likely MNEMO_DATA_DIR names the wrong
 * directory (a project's, a home), where a new database would be made among someone else's files.
 */
export class ForeignDirectory extends Error {
  override name = "ForeignDirectory";
  constructor(
    readonly dataDir: string,
    readonly entries: string[],
  ) {
    const shown = entries.slice(0, 3).join(", ") + (entries.length > 3 ? ", ..." : "");
    super(
      `it holds other files (${shown}) and no Mnemo database; set it to the server's data directory, ` +
        "or to a new or empty directory for a new database",
    );
  }
}

/** What Mnemo keeps in a data directory. */
const OWN_ENTRIES = new Set(["pgdata", LOCK_FILE, SERVER_FILE, SOCKET_NAME]);

/**
 * Refuses a directory that is not a data directory: a file (ENOTDIR, where SQLite's lock said
 * only "unable to open database file"), or a directory holding other files and nothing of Mnemo's.
 * An empty one is a new database; `lost+found`, a mounted file system's own, does not count.
 */
function requireDataDir(dataDir: string): void {
  const entries = readdirSync(dataDir).filter((e) => e !== "lost+found");
  if (entries.length > 0 && !entries.some((e) => OWN_ENTRIES.has(e)))
    throw new ForeignDirectory(dataDir, entries);
}

/**
 * Where the socket lives: in the data directory, unless that path is too long for a Unix socket
 * address (sun_path, 104-108 bytes), then in a private directory under the system temp dir
 * named after the data directory, so the address is the same for every process and restart.
 */
export function socketDirFor(dataDir: string): string {
  if (Buffer.byteLength(path.join(dataDir, SOCKET_NAME)) < 100) return dataDir;
  const hash = createHash("sha256").update(dataDir).digest("hex").slice(0, 16);
  return path.join(os.tmpdir(), `mnemo-${hash}`);
}

function connectionStringFor(socketDir: string): string {
  return `postgresql://postgres@localhost/postgres?host=${encodeURIComponent(socketDir)}`;
}

function canConnect(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect(socketPath);
    const done = (ok: boolean) => {
      sock.destroy();
      resolve(ok);
    };
    sock.once("connect", () => done(true));
    sock.once("error", () => done(false));
    sock.setTimeout(1000, () => done(false));
  });
}

export function readOwnerRecord(dataDir: string): OwnerRecord | undefined {
  try {
    return JSON.parse(readFileSync(path.join(dataDir, SERVER_FILE), "utf8")) as OwnerRecord;
  } catch {
    return undefined;
  }
}

function resolveDir(dataDir: string): string {
  const dir = path.resolve(dataDir);
  makeDirs(dir);
  return realpathSync(dir);
}

/**
 * mkdir -p, a level at a time: Node's own recursive mkdirSync loops for ever where a file system
 * answers ENOENT for a directory whose parent exists (`MNEMO_DATA_DIR=/proc/nope` hung start-up
 * with no output); one level at a time, that ENOENT is thrown.
 */
function makeDirs(dir: string): void {
  const missing: string[] = [];
  for (let d = dir; !existsSync(d); d = path.dirname(d)) {
    missing.unshift(d);
    if (path.dirname(d) === d) break;
  }
  for (const d of missing) {
    try {
      mkdirSync(d);
    } catch (err) {
      // Made meanwhile by another process starting on the same directory.
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
  }
}

export type OwnedOrAttached =
  | { kind: "embedded"; server: EmbeddedServer; connectionString: string }
  | { kind: "attached"; connectionString: string; ownerPid: number };

/**
 * Becomes the owner of the data directory, or attaches to the process that owns it. While the
 * owner is still starting (lock held, socket not up yet) this waits, up to `waitMs`; a
 * `transient` owner (an admin command) is waited for rather than attached to by a long-running
 * process, which would otherwise lose its database a second later.
 */
export async function ownOrAttach(options: {
  dataDir: string;
  maxConnections: number;
  /** This process is itself short-lived (admin commands). */
  transient?: boolean;
  waitMs?: number;
  onCrash?: (err: Error) => void;
}): Promise<OwnedOrAttached> {
  const dataDir = resolveDir(options.dataDir);
  requireDataDir(dataDir);
  const deadline = Date.now() + (options.waitMs ?? 60_000);
  for (;;) {
    const lock = tryLockDir(dataDir);
    if (lock) {
      const server = await startEmbedded({
        dataDir,
        maxConnections: options.maxConnections,
        lock,
        ...(options.transient ? { transient: true } : {}),
        ...(options.onCrash ? { onCrash: options.onCrash } : {}),
      });
      return { kind: "embedded", server, connectionString: server.connectionString };
    }
    const rec = ownRecord(dataDir);
    if (rec?.socketDir && (options.transient || !rec.transient)) {
      if (await canConnect(path.join(rec.socketDir, SOCKET_NAME))) {
        return { kind: "attached", connectionString: connectionStringFor(rec.socketDir), ownerPid: rec.pid };
      }
    }
    if (Date.now() > deadline)
      throw new DirectoryInUse(
        dataDir,
        rec?.pid,
        !!rec?.transient && !options.transient && !!rec.socketDir,
        options.waitMs ?? 60_000,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * For a long-running attached process (serve, api, worker, mcp): when the owner is gone (stopped,
 * killed, an IDE closing the MCP process that owned the directory), this process takes the lock and
 * serves the database itself, on the same socket, so its pool and every other attached process
 * reconnect to it. Before, only an attached `mnemo mcp` did, and a `serve` attached to an IDE's
 * `mnemo mcp` answered 503 until something else started on the directory. Tried every `everyMs`;
 * the lock makes one process win, the others stay attached. An owner that is only frozen (SIGSTOP)
 * still holds the lock: nothing takes over from it.
 */
export function takeOverWhenOwnerGone(options: {
  dataDir: string;
  maxConnections: number;
  onCrash?: (err: Error) => void;
  onTaken: () => void;
  onFailed: (err: Error) => void;
  everyMs?: number;
}): { stop(): Promise<void> } {
  const dataDir = resolveDir(options.dataDir);
  let server: EmbeddedServer | undefined;
  let busy = false;
  let stopped = false;
  const timer = setInterval(async () => {
    if (busy || server || stopped) return;
    busy = true;
    try {
      const lock = tryLockDir(dataDir);
      if (!lock) return;
      if (stopped) {
        lock.release();
        return;
      }
      server = await startEmbedded({
        dataDir,
        maxConnections: options.maxConnections,
        lock,
        ...(options.onCrash ? { onCrash: options.onCrash } : {}),
      });
      clearInterval(timer);
      options.onTaken();
    } catch (err) {
      options.onFailed(err as Error);
    } finally {
      busy = false;
    }
  }, options.everyMs ?? 1000);
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      // A take-over under way finishes first: its server is then stopped with the process.
      while (busy) await new Promise((r) => setTimeout(r, 20));
      await server?.stop();
    },
  };
}

/**
 * The owner record of this directory, its socket kept only when it is this directory's
 * (socketDirFor): a copy of a directory (a backup taken while its server ran) carries the
 * original's record, whose socket leads to the original's server, not to this copy.
 */
function ownRecord(dataDir: string): OwnerRecord | undefined {
  const rec = readOwnerRecord(dataDir);
  if (!rec?.socketDir || path.resolve(rec.socketDir) === socketDirFor(dataDir)) return rec;
  const { socketDir: _elsewhere, ...rest } = rec;
  return rest;
}

/** The connection string of the owner serving this directory right now, if any. */
export async function findRunningServer(dataDir: string): Promise<string | undefined> {
  const dir = path.resolve(dataDir);
  // The owner records its socket under the directory's real path (startEmbedded's resolveDir).
  const rec = ownRecord(existsSync(dir) ? realpathSync(dir) : dir);
  if (rec?.socketDir && (await canConnect(path.join(rec.socketDir, SOCKET_NAME))))
    return connectionStringFor(rec.socketDir);
  return undefined;
}

function workerEntry(): { url: URL; execArgv: string[] | undefined } {
  // Compiled (dist/): the worker is plain JavaScript. From source (tsx, vitest): TypeScript,
  // loaded through tsx in the worker unless this process already runs under it.
  if (!import.meta.url.endsWith(".ts"))
    return { url: new URL("./pglite-worker.js", import.meta.url), execArgv: undefined };
  const underTsx = process.execArgv.some((a) => a.includes("tsx"));
  return {
    url: new URL("./pglite-worker.ts", import.meta.url),
    execArgv: underTsx ? undefined : [...process.execArgv, "--import", "tsx"],
  };
}

/**
 * Opens the data directory as its owner and serves it. Takes the directory's lock unless one is
 * given (and throws DirectoryInUse when another holds it). `maxConnections` must cover every pool
 * that will connect (API, workers, pg-boss, attached processes); the server resets connections
 * past it.
 */
export async function startEmbedded(options: {
  dataDir: string;
  maxConnections: number;
  loadDataDir?: Blob;
  /** Keep the data only in memory (tests that load a template). */
  inMemory?: boolean;
  lock?: DirLock;
  transient?: boolean;
  /** Called if the database thread dies while serving. */
  onCrash?: (err: Error) => void;
}): Promise<EmbeddedServer> {
  const dataDir = resolveDir(options.dataDir);
  const lock = options.lock ?? tryLockDir(dataDir);
  if (!lock) throw new DirectoryInUse(dataDir, readOwnerRecord(dataDir)?.pid);
  try {
    const socketDir = socketDirFor(dataDir);
    mkdirSync(socketDir, { recursive: true, mode: 0o700 });
    const socketPath = path.join(socketDir, SOCKET_NAME);
    // We hold the lock, so a socket left here is a dead owner's: nobody else creates one.
    rmSync(socketPath, { force: true });
    const record: OwnerRecord = { pid: process.pid, ...(options.transient ? { transient: true } : {}) };
    writeFileSync(path.join(dataDir, SERVER_FILE), JSON.stringify(record));

    const loadDataDir = options.loadDataDir ? await options.loadDataDir.arrayBuffer() : undefined;
    const input: WorkerInput = {
      ...(options.inMemory ? {} : { pgDir: path.join(dataDir, "pgdata") }),
      ...(loadDataDir ? { loadDataDir } : {}),
      maxConnections: options.maxConnections,
      listen: { path: socketPath },
    };
    const entry = workerEntry();
    const worker = new Worker(entry.url, {
      workerData: input,
      transferList: loadDataDir ? [loadDataDir] : [],
      ...(entry.execArgv ? { execArgv: entry.execArgv } : {}),
    });

    let stopped = false;
    let stoppedResolve: () => void = () => {};
    const stoppedMsg = new Promise<void>((r) => {
      stoppedResolve = r;
    });
    const dumps = new Map<number, (b: Blob) => void>();
    let nextDump = 0;
    await new Promise<void>((resolve, reject) => {
      let ready = false;
      worker.on("message", (m: FromWorker) => {
        if (m.type === "ready") {
          ready = true;
          resolve();
        } else if (m.type === "failed") {
          const err = m.opening
            ? new DataDirUnopenable(dataDir, m.message)
            : new Error(`the embedded database failed: ${m.message}`);
          if (ready) options.onCrash?.(err);
          else reject(err);
        } else if (m.type === "dump") {
          dumps.get(m.id)?.(new Blob([m.data]));
          dumps.delete(m.id);
        } else if (m.type === "stopped") stoppedResolve();
      });
      worker.on("error", (err) => {
        if (!ready) reject(err);
        else if (!stopped) options.onCrash?.(err);
      });
      worker.on("exit", (code) => {
        stoppedResolve();
        if (!ready) reject(new Error(`the embedded database thread exited (${code}) while starting`));
        else if (!stopped) options.onCrash?.(new Error(`the embedded database thread exited (${code})`));
      });
    });

    const rec: OwnerRecord = { ...record, socketDir };
    writeFileSync(path.join(dataDir, SERVER_FILE), JSON.stringify(rec));
    let stopping: Promise<void> | undefined;
    return {
      connectionString: connectionStringFor(socketDir),
      psqlHint: `psql -h ${socketDir} -U postgres`,
      dump() {
        const id = nextDump++;
        return new Promise<Blob>((resolve) => {
          dumps.set(id, resolve);
          worker.postMessage({ type: "dump", id } satisfies ToWorker);
        });
      },
      stop() {
        stopping ??= (async () => {
          stopped = true;
          worker.postMessage({ type: "stop" } satisfies ToWorker);
          await stoppedMsg;
          await worker.terminate();
          rmSync(path.join(dataDir, SERVER_FILE), { force: true });
          if (socketDir !== dataDir) rmSync(socketDir, { recursive: true, force: true });
          // Last: the next owner may open the files only once they are closed.
          lock.release();
        })();
        return stopping;
      },
    };
  } catch (err) {
    lock.release();
    throw err;
  }
}

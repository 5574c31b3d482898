import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";
import { PgliteWireServer } from "./pglite-server.js";

/**
 * The embedded database: PGlite (PostgreSQL in WebAssembly, with pgvector) persisted in a data
 * directory and served over the Postgres wire protocol, so that `pg`, pg-boss and `psql` all
 * speak to it as to a server. Only one process may open a data directory; the serving process
 * records its address in `server.json` so that other processes (the admin CLI) connect to it.
 */
export interface EmbeddedServer {
  connectionString: string;
  /** The database itself (dumps for test templates). */
  pglite: PGlite;
  /** How a human reaches it with psql. */
  psqlHint: string;
  stop(): Promise<void>;
}

const SERVER_FILE = "server.json";

interface ServerRecord {
  pid: number;
  socketDir?: string;
  host?: string;
  port?: number;
}

function connectionStringFor(rec: ServerRecord): string {
  if (rec.socketDir)
    return `postgresql://postgres@localhost/postgres?host=${encodeURIComponent(rec.socketDir)}`;
  return `postgresql://postgres@${rec.host}:${rec.port}/postgres`;
}

function canConnect(rec: ServerRecord): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = rec.socketDir
      ? net.connect(path.join(rec.socketDir, ".s.PGSQL.5432"))
      : net.connect(rec.port ?? 0, rec.host ?? "127.0.0.1");
    const done = (ok: boolean) => {
      sock.destroy();
      resolve(ok);
    };
    sock.once("connect", () => done(true));
    sock.once("error", () => done(false));
    sock.setTimeout(1000, () => done(false));
  });
}

/** The address of a server already serving this data directory, if one is up. */
export async function findRunningServer(dataDir: string): Promise<string | undefined> {
  const file = path.join(dataDir, SERVER_FILE);
  if (!existsSync(file)) return undefined;
  try {
    const rec = JSON.parse(readFileSync(file, "utf8")) as ServerRecord;
    if (await canConnect(rec)) return connectionStringFor(rec);
  } catch {
    // unreadable record: treat as stale
  }
  return undefined;
}

export async function openPglite(dataDir: string | undefined, loadDataDir?: Blob): Promise<PGlite> {
  return PGlite.create({
    ...(dataDir ? { dataDir } : {}),
    ...(loadDataDir ? { loadDataDir } : {}),
    extensions: { vector },
  });
}

/**
 * Opens the data directory and serves it. `maxConnections` must cover every pool that will
 * connect (API, workers, pg-boss, admin); the socket server resets connections past it.
 */
export async function startEmbedded(options: {
  dataDir: string;
  maxConnections: number;
  loadDataDir?: Blob;
  /** Keep the data only in memory (tests that load a template). */
  inMemory?: boolean;
}): Promise<EmbeddedServer> {
  const dataDir = path.resolve(options.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const pgDir = path.join(dataDir, "pgdata");
  const db = await openPglite(options.inMemory ? undefined : pgDir, options.loadDataDir);

  // A Unix socket keeps the database private to this user; its path must fit sun_path (107
  // bytes), so a deep data directory falls back to a loopback port.
  const socketPath = path.join(dataDir, ".s.PGSQL.5432");
  const useSocket = Buffer.byteLength(socketPath) < 100;
  if (useSocket && existsSync(socketPath)) rmSync(socketPath);
  const server = new PgliteWireServer(db, options.maxConnections);
  const address = await server.listen(useSocket ? { path: socketPath } : { host: "127.0.0.1", port: 0 });
  const rec: ServerRecord =
    typeof address === "string"
      ? { pid: process.pid, socketDir: dataDir }
      : { pid: process.pid, host: address.address, port: address.port };
  writeFileSync(path.join(dataDir, SERVER_FILE), JSON.stringify(rec));
  const psqlHint = rec.socketDir
    ? `psql -h ${rec.socketDir} -U postgres`
    : `psql -h ${rec.host} -p ${rec.port} -U postgres`;

  let stopped = false;
  return {
    connectionString: connectionStringFor(rec),
    pglite: db,
    psqlHint,
    async stop() {
      if (stopped) return;
      stopped = true;
      await server.close();
      rmSync(path.join(dataDir, SERVER_FILE), { force: true });
      // A clean close flushes PGlite's files, so nothing written is lost.
      await db.close();
    },
  };
}

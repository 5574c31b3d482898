import { parentPort, workerData } from "node:worker_threads";
import { PGlite } from "@electric-sql/pglite";
import { btree_gin } from "@electric-sql/pglite/contrib/btree_gin";
import { vector } from "@electric-sql/pglite-pgvector";
import { PgliteWireServer } from "./pglite-server.js";

/**
 * The embedded database's own thread: PGlite and the wire server that serves it live here, so
 * that a long statement (a big ingest's store stage, a search over many rows) runs beside the
 * HTTP event loop instead of on it. The main thread talks to the database over the socket like
 * any other client, and to this thread only to dump or stop it (see embedded.ts).
 */
export interface WorkerInput {
  /** Where PGlite keeps its files; absent: in memory. */
  pgDir?: string;
  /** A dump to start from (tests' template). */
  loadDataDir?: ArrayBuffer;
  maxConnections: number;
  listen: { path: string } | { host: string; port: number };
}

export type ToWorker = { type: "dump"; id: number } | { type: "stop" };
export type FromWorker =
  | { type: "ready"; address: string | { address: string; port: number } }
  /** `opening`: the data directory's files would not open (nothing was served). */
  | { type: "failed"; message: string; opening?: boolean }
  | { type: "dump"; id: number; data: ArrayBuffer }
  | { type: "stopped" };

const port = parentPort!;
const input = workerData as WorkerInput;
const post = (m: FromWorker, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);

const open = (debug?: 1) =>
  PGlite.create({
    ...(input.pgDir ? { dataDir: input.pgDir } : {}),
    ...(input.loadDataDir ? { loadDataDir: new Blob([input.loadDataDir]) } : {}),
    // btree_gin: the scoped full-text index (sql/060_scoped_text_index.sql).
    extensions: { vector, btree_gin },
    ...(debug ? { debug } : {}),
  });

/**
 * PostgreSQL's own reason why the files would not open. PGlite aborts with only "Aborted()";
 * opened again with its log on, it prints PostgreSQL's log lines through this thread's console,
 * read here for the PANIC, FATAL or ERROR lines (a damaged or incomplete data directory: "could
 * not open file "global/pg_control": No such file or directory").
 */
async function whyNotOpen(): Promise<string | undefined> {
  if (!input.pgDir) return undefined;
  const lines: string[] = [];
  const saved = { log: console.log, info: console.info, warn: console.warn, error: console.error };
  const keep = (...args: unknown[]) => {
    lines.push(args.map(String).join(" "));
  };
  Object.assign(console, { log: keep, info: keep, warn: keep, error: keep });
  try {
    await (await open(1)).close();
    return undefined;
  } catch {
    const said = lines.flatMap((l) => l.split("\n")).filter((l) => /\b(PANIC|FATAL|ERROR):/.test(l));
    return said.length
      ? said.map((l) => l.replace(/^.*?\b(PANIC|FATAL|ERROR):\s*/, "$1: ")).join("; ")
      : undefined;
  } finally {
    Object.assign(console, saved);
  }
}

async function main() {
  let db: PGlite;
  try {
    db = await open();
  } catch (err) {
    const reason = await whyNotOpen().catch(() => undefined);
    throw new OpenFailure(reason ? `PostgreSQL says ${reason}` : ((err as Error)?.message ?? String(err)));
  }
  // After a PANIC the session may not be used again: the owner stops (src/db/open.ts), and the
  // next start recovers the files as after a crash. No close: it would write on the same session.
  const server = new PgliteWireServer(db, input.maxConnections, (message) =>
    post({ type: "failed", message: `PANIC: ${message}` }),
  );
  const address = await server.listen(input.listen);
  post({
    type: "ready",
    address: typeof address === "string" ? address : { address: address.address, port: address.port },
  });

  let stopping = false;
  port.on("message", async (m: ToWorker) => {
    if (m.type === "dump") {
      const blob = await db.dumpDataDir("gzip");
      const data = await blob.arrayBuffer();
      post({ type: "dump", id: m.id, data }, [data]);
    } else if (m.type === "stop" && !stopping) {
      stopping = true;
      // Connections first (an open transaction is rolled back), then a clean close that
      // flushes PGlite's files, so nothing committed is lost.
      await server.close();
      await db.close();
      post({ type: "stopped" });
      port.close();
    }
  });
}

/** The data directory's files could not be opened (before the database was served). */
class OpenFailure extends Error {}

main().catch((err: unknown) => {
  if (err instanceof OpenFailure) post({ type: "failed", message: err.message, opening: true });
  else post({ type: "failed", message: (err as Error)?.stack ?? String(err) });
});

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
  | { type: "failed"; message: string }
  | { type: "dump"; id: number; data: ArrayBuffer }
  | { type: "stopped" };

const port = parentPort!;
const input = workerData as WorkerInput;
const post = (m: FromWorker, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);

async function main() {
  const db = await PGlite.create({
    ...(input.pgDir ? { dataDir: input.pgDir } : {}),
    ...(input.loadDataDir ? { loadDataDir: new Blob([input.loadDataDir]) } : {}),
    // btree_gin: the scoped full-text index (sql/060_scoped_text_index.sql).
    extensions: { vector, btree_gin },
  });
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

main().catch((err: unknown) => {
  post({ type: "failed", message: (err as Error)?.stack ?? String(err) });
});

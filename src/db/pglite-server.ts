import net from "node:net";
import type { PGlite } from "@electric-sql/pglite";

/**
 * Serves one PGlite over the Postgres wire protocol to many connections.
 *
 * PGlite is a single session. pglite-socket's server queues each protocol *message* on its own,
 * so another connection's statement can run between one client's Parse and Bind and discard its
 * unnamed statement ("unnamed prepared statement does not exist", or a hang under load). Here a
 * client's messages are grouped into batches that end at Sync, simple Query, Flush or Terminate,
 * and each batch runs without interleaving. While a connection holds a transaction open, only its
 * batches run; a connection that goes away mid-transaction is rolled back.
 */
export class PgliteWireServer {
  private server: net.Server | undefined;
  private queue: Array<{ conn: Conn; batch: Buffer[]; done: () => void }> = [];
  private running = false;
  /** The connection whose transaction is open, if any. */
  private owner: Conn | undefined;
  private readonly conns = new Set<Conn>();

  constructor(
    private readonly db: PGlite,
    private readonly maxConnections: number,
  ) {}

  listen(options: { path: string } | { host: string; port: number }): Promise<net.AddressInfo | string> {
    const server = net.createServer((socket) => this.accept(socket));
    server.maxConnections = this.maxConnections;
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once("error", reject);
      const done = () => resolve(server.address()!);
      if ("path" in options) server.listen(options.path, done);
      else server.listen(options.port, options.host, done);
    });
  }

  async close(): Promise<void> {
    for (const c of this.conns) c.socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    // Let any batch in flight finish before the database is closed.
    while (this.running) await new Promise((r) => setTimeout(r, 5));
  }

  private accept(socket: net.Socket) {
    socket.setNoDelay(true);
    const conn: Conn = {
      socket,
      buf: Buffer.alloc(0),
      pending: [],
      started: false,
      closed: false,
      chain: Promise.resolve(),
    };
    this.conns.add(conn);
    socket.on("data", (data) => {
      conn.buf = conn.buf.length ? Buffer.concat([conn.buf, data]) : data;
      this.split(conn);
    });
    socket.on("error", () => socket.destroy());
    socket.on("close", () => {
      conn.closed = true;
      this.conns.delete(conn);
      this.queue = this.queue.filter((q) => {
        if (q.conn === conn) q.done();
        return q.conn !== conn;
      });
      if (this.owner === conn) this.rollbackOrphan();
    });
  }

  /** Cuts the byte stream into messages and complete batches. */
  private split(conn: Conn) {
    for (;;) {
      const b = conn.buf;
      if (!conn.started) {
        // Startup-phase messages have no type byte: int32 length, int32 code.
        if (b.length < 8) return;
        const len = b.readInt32BE(0);
        const code = b.readInt32BE(4);
        if (b.length < len) return;
        conn.buf = b.subarray(len);
        if (code === 80877103 || code === 80877104) {
          conn.socket.write("N"); // SSL / GSSAPI encryption: not offered
          continue;
        }
        if (code === 80877102) continue; // CancelRequest: not supported, ignored
        conn.started = true;
        this.enqueue(conn, [Buffer.from(b.subarray(0, len))]);
        continue;
      }
      if (b.length < 5) return;
      const len = b.readInt32BE(1) + 1;
      if (b.length < len) return;
      const msg = Buffer.from(b.subarray(0, len));
      conn.buf = b.subarray(len);
      conn.pending.push(msg);
      const type = String.fromCharCode(msg[0]!);
      if (type === "S" || type === "Q" || type === "H" || type === "X") {
        const batch = conn.pending;
        conn.pending = [];
        this.enqueue(conn, batch);
      }
    }
  }

  private enqueue(conn: Conn, batch: Buffer[]) {
    // Batches of one connection stay in order.
    conn.chain = conn.chain.then(
      () =>
        new Promise<void>((done) => {
          if (conn.closed) return done();
          this.queue.push({ conn, batch, done });
          this.pump();
        }),
    );
  }

  private async pump() {
    if (this.running) return;
    this.running = true;
    try {
      for (;;) {
        const i = this.owner ? this.queue.findIndex((q) => q.conn === this.owner) : 0;
        if (i < 0 || this.queue.length === 0) break;
        const item = this.queue.splice(i, 1)[0]!;
        await this.run(item.conn, item.batch);
        this.owner = this.db.isInTransaction() ? item.conn : undefined;
        item.done();
        if (this.owner?.closed) await this.rollbackOrphan();
      }
    } finally {
      this.running = false;
    }
  }

  private async run(conn: Conn, batch: Buffer[]) {
    await this.db.runExclusive(async () => {
      for (const msg of batch) {
        if (msg[0] === 0x58 /* X: Terminate */) {
          conn.socket.end();
          continue;
        }
        await this.db.execProtocolRawStream(new Uint8Array(msg), {
          // `data` is a view into PGlite's memory, reused for the next chunk; a socket that is
          // not draining queues what it is given, so the bytes are copied first.
          onRawData: (data) => {
            if (!conn.closed && data.length) conn.socket.write(Buffer.from(data));
          },
        });
      }
    });
  }

  private async rollbackOrphan() {
    if (this.running && this.owner && !this.owner.closed) return;
    this.owner = undefined;
    if (this.db.isInTransaction()) await this.db.exec("ROLLBACK").catch(() => {});
    this.pump();
  }
}

interface Conn {
  socket: net.Socket;
  buf: Buffer;
  pending: Buffer[];
  started: boolean;
  closed: boolean;
  chain: Promise<void>;
}

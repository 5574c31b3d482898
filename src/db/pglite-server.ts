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
 *
 * LISTEN/NOTIFY: the one session delivers every notification into the output of whichever
 * connection's statement is running, usually the notifier's. The server records which channels
 * each connection asked for (`LISTEN name` as a simple query), takes NotificationResponse
 * messages out of the output stream, and sends each to the connections listening on its channel.
 *
 * PANIC: a PostgreSQL server restarts after one (a failed write of the write-ahead log, as when
 * the disk is full); PGlite reports it as an error and carries on with a session it may no longer
 * use: every later statement failed ("cannot drop active portal") or waited for ever, and every
 * request hung. The server watches each batch's output for an ErrorResponse of severity PANIC;
 * after one it runs nothing more, drops every connection and calls `onPanic`, whose caller stops
 * the process (src/db/open.ts) so that the next start recovers the files as after a crash.
 *
 * Tools (psql, pg_dump): their session settings would be the service's too (one session): a
 * `SET search_path = ''` left every request a 500 until a restart. After each batch of a
 * connection that is not the service's own (application_name, see createDb) and when one closes,
 * outside a transaction, the settings are reset (RESET ALL): a tool's SET lasts for its batch or
 * transaction. COPY ... FROM STDIN is refused: PGlite reads the copied rows from the same call as
 * the statement, and one without them ended its one backend (the process exited).
 */
export class PgliteWireServer {
  private server: net.Server | undefined;
  private queue: Array<{ conn: Conn; batch: Buffer[]; done: () => void }> = [];
  private running = false;
  /** The connection whose transaction is open, if any. */
  private owner: Conn | undefined;
  private readonly conns = new Set<Conn>();

  /** A PANIC was seen (see the class comment): nothing runs any more. */
  private panicked = false;

  constructor(
    private readonly db: PGlite,
    private readonly maxConnections: number,
    private readonly onPanic: (message: string) => void = () => {},
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
    if (this.panicked) {
      socket.destroy();
      return;
    }
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
        conn.own = OWN_APPLICATIONS.has(startupParameter(b.subarray(0, len), "application_name") ?? "");
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
      while (!this.panicked) {
        const i = this.owner ? this.queue.findIndex((q) => q.conn === this.owner) : 0;
        if (i < 0 || this.queue.length === 0) break;
        const item = this.queue.splice(i, 1)[0]!;
        await this.run(item.conn, item.batch);
        this.owner = this.db.isInTransaction() ? item.conn : undefined;
        if (!this.owner && item.conn.started && !item.conn.own) await this.resetSettings();
        item.done();
        if (this.owner?.closed) await this.rollbackOrphan();
      }
    } finally {
      this.running = false;
    }
  }

  private async run(conn: Conn, batch: Buffer[]) {
    const panic = new PanicWatch();
    await this.db.runExclusive(async () => {
      // Only while someone listens does the output need reading message by message.
      const router = this.listening()
        ? new NotificationRouter(conn, (ch) => this.listenersOf(ch))
        : undefined;
      for (const msg of batch) {
        if (panic.message !== undefined) break;
        if (msg[0] === 0x58 /* X: Terminate */) {
          conn.socket.end();
          continue;
        }
        if (COPY_DATA.has(msg[0]!)) continue; // no COPY FROM STDIN runs (see refusingCopyIn)
        if (msg[0] === 0x51 /* Q: simple query */) trackListen(conn, msg);
        // The service never sends one: its statements are not read for it.
        await this.db.execProtocolRawStream(new Uint8Array(conn.own ? msg : refusingCopyIn(msg)), {
          // `data` is a view into PGlite's memory, reused for the next chunk; a socket that is
          // not draining queues what it is given, so the bytes are copied first.
          onRawData: (data) => {
            if (!data.length) return;
            panic.push(data);
            if (router) router.push(data);
            else if (!conn.closed) conn.socket.write(Buffer.from(data));
          },
        });
      }
    });
    if (panic.message !== undefined && !this.panicked) {
      this.panicked = true;
      this.server?.close();
      // The ErrorResponse has been written: each connection ends once its output is sent.
      for (const c of this.conns) c.socket.end();
      for (const q of this.queue.splice(0)) q.done();
      this.onPanic(panic.message);
    }
  }

  private listening(): boolean {
    for (const c of this.conns) if (c.channels?.size) return true;
    return false;
  }

  private listenersOf(channel: string): Conn[] {
    return [...this.conns].filter((c) => !c.closed && (c.channels?.has(channel) || c.channels?.has("*")));
  }

  private async rollbackOrphan() {
    if (this.running && this.owner && !this.owner.closed) return;
    const orphan = this.owner;
    this.owner = undefined;
    if (this.db.closed) return; // a socket closing after the database did
    if (this.db.isInTransaction()) await this.db.exec("ROLLBACK").catch(() => {});
    if (orphan && !orphan.own) await this.resetSettings();
    this.pump();
  }

  /** Back to the server's settings (see the class comment), unless the database is gone. */
  private async resetSettings() {
    if (this.db.closed || this.panicked) return;
    await this.db.exec("RESET ALL").catch(() => {});
  }
}

interface Conn {
  socket: net.Socket;
  buf: Buffer;
  pending: Buffer[];
  started: boolean;
  closed: boolean;
  chain: Promise<void>;
  /** Channels this connection LISTENs on. */
  channels?: Set<string>;
  /** A connection of the service's own (its pools, pg-boss), whose settings are its own. */
  own?: boolean;
}

/** The application_name of the service's connections: createDb's pools, and pg-boss's. */
const OWN_APPLICATIONS = new Set(["mnemo", "pgboss"]);

/** A parameter of a StartupMessage (int32 length, int32 version, then name/value C strings). */
function startupParameter(msg: Buffer, name: string): string | undefined {
  const parts = msg.toString("utf8", 8).split("\0");
  for (let i = 0; i + 1 < parts.length; i += 2) if (parts[i] === name) return parts[i + 1];
  return undefined;
}

/** CopyData, CopyDone, CopyFail: only ever sent after a CopyInResponse, which no client gets. */
const COPY_DATA = new Set([0x64, 0x63, 0x66]);
const COPY_IN = /\bcopy\b[^;]*\bfrom\s+stdin\b/i;

/**
 * A simple Query or a Parse of `COPY ... FROM STDIN`, replaced by a statement that fails with a
 * clear error (and the same transaction state a failed statement leaves); any other message as is.
 */
function refusingCopyIn(msg: Buffer): Buffer {
  const type = msg[0];
  if (type !== 0x51 && type !== 0x50) return msg;
  const body = msg.subarray(5, msg.length);
  // Q: the query, NUL. P: the statement name, NUL, the query, NUL, the parameter types.
  const nameEnd = type === 0x50 ? body.indexOf(0) + 1 : 0;
  const queryEnd = body.indexOf(0, nameEnd);
  if (!COPY_IN.test(body.toString("utf8", nameEnd, queryEnd))) return msg;
  const refusal = Buffer.from(
    "DO $mnemo$ BEGIN RAISE EXCEPTION 'COPY FROM STDIN is not available through the embedded database''s socket' " +
      "USING ERRCODE = 'feature_not_supported', HINT = 'insert the rows with INSERT, or move to PostgreSQL (admin migrate-to)'; END $mnemo$\0",
  );
  const rest =
    type === 0x50 ? Buffer.concat([body.subarray(0, nameEnd), refusal, Buffer.from([0, 0])]) : refusal;
  const head = Buffer.alloc(5);
  head[0] = type;
  head.writeInt32BE(rest.length + 4, 1);
  return Buffer.concat([head, rest]);
}

const LISTEN_RE = /^\s*(LISTEN|UNLISTEN)\s+("(?:[^"]|"")+"|[A-Za-z_][\w$]*|\*)\s*;?\s*$/i;

/** Records `LISTEN x` / `UNLISTEN x` / `UNLISTEN *` sent by a connection as a simple query. */
function trackListen(conn: Conn, msg: Buffer) {
  const sql = msg.toString("utf8", 5, msg.length - 1);
  const m = LISTEN_RE.exec(sql);
  if (!m) return;
  const raw = m[2]!;
  const channel = raw.startsWith('"') ? raw.slice(1, -1).replaceAll('""', '"') : raw.toLowerCase();
  conn.channels ??= new Set();
  if (m[1]!.toUpperCase() === "LISTEN") conn.channels.add(channel);
  else if (channel === "*") conn.channels.clear();
  else conn.channels.delete(channel);
}

/**
 * Walks an output stream as backend messages (type byte, int32 length, body; a message may
 * straddle chunks). A message whose type `wants` accepts is collected whole (header and body) and
 * handed to `collected`; the bytes of every other message go to `passed`, in order.
 */
abstract class MessageWalker {
  private readonly header = Buffer.alloc(5);
  private headerLen = 0;
  /** Body bytes of the current message still to come. */
  private remaining = 0;
  /** The message being collected, when the current one is wanted. */
  private collecting: Buffer[] | undefined;

  protected abstract wants(type: number): boolean;
  protected abstract collected(msg: Buffer): void;
  protected passed(_bytes: Uint8Array): void {}

  protected walk(data: Uint8Array) {
    let runStart = -1; // start of the current run of passed bytes in `data`
    const endRun = (at: number) => {
      if (runStart >= 0 && at > runStart) this.passed(data.subarray(runStart, at));
      runStart = -1;
    };
    let pos = 0;
    while (pos < data.length) {
      if (this.remaining > 0) {
        const n = Math.min(this.remaining, data.length - pos);
        if (this.collecting) this.collecting.push(Buffer.from(data.subarray(pos, pos + n)));
        else if (runStart < 0) runStart = pos;
        pos += n;
        this.remaining -= n;
        if (this.remaining === 0 && this.collecting) this.finish();
        continue;
      }
      const headerStart = pos;
      const carried = this.headerLen; // header bytes that came with the previous chunk
      while (this.headerLen < 5 && pos < data.length) this.header[this.headerLen++] = data[pos++]!;
      if (this.headerLen < 5) {
        endRun(headerStart);
        break; // the rest of the header comes with the next chunk
      }
      this.headerLen = 0;
      this.remaining = this.header.readInt32BE(1) - 4;
      if (this.wants(this.header[0]!)) {
        endRun(headerStart);
        this.collecting = [Buffer.from(this.header)];
        if (this.remaining === 0) this.finish();
      } else if (carried > 0) {
        this.passed(Buffer.from(this.header)); // only at the start of a chunk: nothing precedes it
      } else if (runStart < 0) {
        runStart = headerStart;
      }
    }
    endRun(pos);
  }

  private finish() {
    const msg = Buffer.concat(this.collecting!);
    this.collecting = undefined;
    this.collected(msg);
  }
}

/**
 * Passes every message of one connection's output but NotificationResponse ('A') through to that
 * connection, and sends each 'A' to the connections listening on its channel.
 */
class NotificationRouter extends MessageWalker {
  private out: Buffer[] = [];

  constructor(
    private readonly conn: Conn,
    private readonly listenersOf: (channel: string) => Conn[],
  ) {
    super();
  }

  push(data: Uint8Array) {
    this.out = [];
    this.walk(data);
    if (this.out.length && !this.conn.closed)
      this.conn.socket.write(this.out.length === 1 ? this.out[0]! : Buffer.concat(this.out));
  }

  protected wants(type: number) {
    return type === 0x41; // A: NotificationResponse
  }

  protected override passed(bytes: Uint8Array) {
    this.out.push(Buffer.from(bytes));
  }

  protected collected(msg: Buffer) {
    // Int32 length, int32 sender pid, then the channel name (NUL-terminated).
    const end = msg.indexOf(0, 9);
    const channel = msg.toString("utf8", 9, end);
    for (const c of this.listenersOf(channel)) c.socket.write(msg);
  }
}

/**
 * Reads one batch's output and keeps the message of the first ErrorResponse ('E') whose severity
 * is PANIC (field V, or S from a server without V). Only message boundaries are read, so a row's
 * bytes never count.
 */
export class PanicWatch extends MessageWalker {
  /** The PANIC's message, once one was seen. */
  message: string | undefined;

  push(data: Uint8Array) {
    if (this.message === undefined) this.walk(data);
  }

  protected wants(type: number) {
    return type === 0x45 && this.message === undefined; // E: ErrorResponse
  }

  protected collected(msg: Buffer) {
    const fields = new Map<string, string>();
    for (let at = 5; at < msg.length && msg[at] !== 0; ) {
      const end = msg.indexOf(0, at + 1);
      if (end < 0) break;
      fields.set(String.fromCharCode(msg[at]!), msg.toString("utf8", at + 1, end));
      at = end + 1;
    }
    if ((fields.get("V") ?? fields.get("S")) === "PANIC") this.message = fields.get("M") ?? "PANIC";
  }
}

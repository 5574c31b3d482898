import net from "node:net";

export interface TcpProxy {
  port: number;
  /** The database goes away: every connection through the proxy is reset and new ones are refused. */
  cut(): Promise<void>;
  /**
   * It is back: connections are accepted and forwarded again, on the same port. With
   * `shuttingDown`, each new connection is ended by the server as it is established, the way a
   * fast shutdown meets a connection just made: its last handshake message (ReadyForQuery) and a
   * FATAL 57P01 arrive in one chunk, then the connection closes. With `tooManyClients`, each new
   * connection's start-up is answered as a server at its `max_connections` answers it: FATAL 53300
   * "sorry, too many clients already", then the connection closes.
   */
  restore(options?: { shuttingDown?: boolean; tooManyClients?: boolean }): Promise<void>;
  /**
   * The database stops answering but its connections stay open (a paused server or VM, a network
   * partition): every connection, open or new, is held and nothing is forwarded either way.
   */
  freeze(): void;
  /** It answers again: what was held is forwarded, and forwarding goes on. */
  thaw(): void;
  close(): Promise<void>;
}

/**
 * A TCP forwarder on a loopback port to `target`, which a test can unplug: as a PostgreSQL restart
 * or a failover looks to its clients (connections reset, then refused for a while), without
 * stopping the server other test files share.
 */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  const pairs = new Set<{ client: net.Socket; upstream: net.Socket }>();
  let shuttingDown = false;
  let tooManyClients = false;
  let frozen = false;
  const hold = ({ client, upstream }: { client: net.Socket; upstream: net.Socket }) => {
    client.unpipe(upstream);
    upstream.unpipe(client);
    client.pause();
    upstream.pause();
  };
  const forward = ({ client, upstream }: { client: net.Socket; upstream: net.Socket }) => {
    client.pipe(upstream);
    upstream.pipe(client);
  };
  const server = net.createServer((client) => {
    if (tooManyClients) {
      client.on("error", () => {});
      client.once("data", () => client.end(fatal("53300", "sorry, too many clients already")));
      return;
    }
    const upstream = net.connect(target.port, target.host);
    const pair = { client, upstream };
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("error", () => {});
      s.on("close", () => {
        sockets.delete(s);
        pairs.delete(pair);
        client.destroy();
        upstream.destroy();
      });
    }
    if (shuttingDown) {
      client.pipe(upstream);
      endAtReady(upstream, client);
      return;
    }
    pairs.add(pair);
    if (frozen) hold(pair);
    else forward(pair);
  });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        server.off("error", reject);
        resolve();
      });
    });
  await listen(0);
  const port = (server.address() as net.AddressInfo).port;
  const closeServer = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return {
    port,
    async cut() {
      const closed = closeServer();
      for (const s of sockets) s.resetAndDestroy();
      await closed;
    },
    restore(options = {}) {
      shuttingDown = options.shuttingDown ?? false;
      tooManyClients = options.tooManyClients ?? false;
      return server.listening ? Promise.resolve() : listen(port);
    },
    freeze() {
      frozen = true;
      for (const pair of pairs) hold(pair);
    },
    thaw() {
      frozen = false;
      for (const pair of pairs) forward(pair);
    },
    async close() {
      const closed = server.listening ? closeServer() : Promise.resolve();
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}

/** PostgreSQL's ErrorResponse for a fast shutdown: FATAL 57P01. */
const adminShutdown = () => fatal("57P01", "terminating connection due to administrator command");

/** A PostgreSQL ErrorResponse of severity FATAL. */
function fatal(code: string, message: string): Buffer {
  const fields = Buffer.concat([
    ...[
      ["S", "FATAL"],
      ["V", "FATAL"],
      ["C", code],
      ["M", message],
    ].map(([k, v]) => Buffer.from(`${k}${v}\0`)),
    Buffer.from("\0"),
  ]);
  const head = Buffer.alloc(5);
  head.write("E", 0);
  head.writeInt32BE(fields.length + 4, 1);
  return Buffer.concat([head, fields]);
}

/**
 * Forwards the server's handshake (messages framed as type byte and length) until its first
 * ReadyForQuery, then writes what it held and a FATAL 57P01 in one write and ends both sides.
 */
function endAtReady(upstream: net.Socket, client: net.Socket) {
  let held = Buffer.alloc(0);
  upstream.on("data", (chunk: Buffer) => {
    held = Buffer.concat([held, chunk]);
    for (let at = 0; at + 5 <= held.length; ) {
      const end = at + 1 + held.readInt32BE(at + 1);
      if (end > held.length) break;
      if (held[at] === 0x5a /* Z */) {
        client.end(Buffer.concat([held.subarray(0, end), adminShutdown()]));
        upstream.destroy();
        return;
      }
      at = end;
    }
  });
}

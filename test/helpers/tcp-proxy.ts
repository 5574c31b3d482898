import net from "node:net";

export interface TcpProxy {
  port: number;
  /** The database goes away: every connection through the proxy is reset and new ones are refused. */
  cut(): Promise<void>;
  /** It is back: connections are accepted and forwarded again, on the same port. */
  restore(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A TCP forwarder on a loopback port to `target`, which a test can unplug: as a PostgreSQL restart
 * or a failover looks to its clients (connections reset, then refused for a while), without
 * stopping the server other test files share.
 */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("error", () => {});
      s.on("close", () => {
        sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
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
    restore: () => listen(port),
    async close() {
      const closed = server.listening ? closeServer() : Promise.resolve();
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}

import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  raw: Buffer;
}

/**
 * What the receiver does with one request: a status and headers (sent once `wait` settles), or
 * `hang` (never answers).
 */
export type Reply = { status: number; headers?: Record<string, string>; wait?: Promise<unknown> } | "hang";

/**
 * A real HTTP receiver on 127.0.0.1 for delivery tests. Each path has its own script of replies,
 * used in order (the last one repeats); unscripted paths answer 200.
 */
export async function startReceiver() {
  const received: Received[] = [];
  const scripts = new Map<string, Reply[]>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const path = req.url ?? "/";
      received.push({ path, headers: req.headers, raw: Buffer.concat(chunks) });
      const script = scripts.get(path) ?? [];
      const reply = (script.length > 1 ? script.shift() : script[0]) ?? { status: 200 };
      if (reply === "hang") return;
      void (reply.wait ?? Promise.resolve()).then(() => res.writeHead(reply.status, reply.headers).end("{}"));
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    received,
    at: (path: string) => received.filter((r) => r.path === path),
    script: (path: string, replies: Reply[]) => scripts.set(path, [...replies]),
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

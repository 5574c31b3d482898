/**
 * A minimal Mnemo webhook receiver (Node, no dependencies).
 *
 *   WEBHOOK_SECRET=whsec_... PORT=3000 npx tsx examples/webhook-receiver.ts
 *
 * It verifies X-Webhook-Signature on the raw request bytes, before parsing anything, with a
 * constant-time comparison; answers 401 on a bad signature and 2xx quickly otherwise (do slow
 * work after acknowledging). X-Webhook-Id is the same on every retry of one event: use it to
 * drop duplicates.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import http from "node:http";
import { pathToFileURL } from "node:url";

/** True when `header` is `sha256=<hex HMAC-SHA256 of rawBody keyed by secret>`. */
export function verifyWebhookSignature(secret: string, rawBody: Buffer, header: string | undefined): boolean {
  if (!header?.startsWith("sha256=")) return false;
  const expected = Buffer.from(createHmac("sha256", secret).update(rawBody).digest("hex"), "utf8");
  const given = Buffer.from(header.slice("sha256=".length), "utf8");
  // timingSafeEqual needs equal lengths; the length of a hex SHA-256 digest is public anyway.
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export function createReceiver(
  secret: string,
  onEvent: (event: Record<string, unknown>, id: string) => void,
): http.Server {
  const seen = new Set<string>();
  return http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      if (!verifyWebhookSignature(secret, raw, req.headers["x-webhook-signature"] as string | undefined)) {
        res.writeHead(401).end("bad signature");
        return;
      }
      const id = String(req.headers["x-webhook-id"] ?? "");
      res.writeHead(204).end();
      if (seen.has(id)) return; // a retry of an event already handled
      seen.add(id);
      onEvent(JSON.parse(raw.toString("utf8")), id);
    });
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const secret = process.env.WEBHOOK_SECRET;
  if (!secret) throw new Error("set WEBHOOK_SECRET to the whsec_ value from PUT /v1/webhooks");
  const port = Number(process.env.PORT ?? 3000);
  createReceiver(secret, (event, id) => {
    console.log(id, event.event, event.job_id, JSON.stringify(event));
  }).listen(port, () => console.log(`webhook receiver on :${port}`));
}

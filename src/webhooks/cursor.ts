import { createHmac, timingSafeEqual } from "node:crypto";
import { CoreError } from "../errors.js";

interface Position {
  ts: string;
  id: string;
}

const mac = (key: Buffer, payload: string) =>
  createHmac("sha256", key).update(`webhook-deliveries.${payload}`).digest("base64url");

/** An opaque keyset cursor, signed with the server key and bound to the organisation. */
export function encodeCursor(key: Buffer, orgId: string, pos: Position): string {
  const payload = Buffer.from(JSON.stringify({ o: orgId, t: pos.ts, i: pos.id })).toString("base64url");
  return `${payload}.${mac(key, payload)}`;
}

export function decodeCursor(key: Buffer, orgId: string, cursor: string): Position {
  const [payload, sig] = cursor.split(".");
  const expected = payload ? Buffer.from(mac(key, payload)) : Buffer.alloc(0);
  const given = Buffer.from(sig ?? "");
  if (!payload || given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw new CoreError("invalid_request", "cursor is not valid.");
  }
  const p = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as {
    o: string;
    t: string;
    i: string;
  };
  if (p.o !== orgId) throw new CoreError("cursor_mismatch", "cursor was issued to another organisation.");
  return { ts: p.t, id: p.i };
}

import { createCipheriv, createDecipheriv, createHmac, randomBytes } from "node:crypto";
import { CoreError } from "./errors.js";

/**
 * Opaque, tamper-evident list cursors. The position is sealed with AES-256-GCM under a key derived
 * from the server secret, so a client can neither read nor forge one; the organisation and the
 * order are inside the sealed payload and checked on use, so a cursor only works for the
 * organisation and the order that issued it.
 */
export type ListOrder = "created_at_desc" | "created_at_asc";

export interface CursorPosition {
  /** created_at at microsecond precision, as exact text from Postgres (ISO 8601, UTC). */
  createdAt: string;
  id: string;
}

interface Sealed {
  v: 1;
  org: string;
  order: ListOrder;
  t: string;
  id: string;
}

// Distinct from the webhook-secret key and bound to this use, so one ciphertext never opens as another.
const AAD = Buffer.from("mnemo:list-cursor:v1");
const cursorKey = (secret: Buffer) => createHmac("sha256", secret).update("mnemo:list-cursor").digest();

export function encodeCursor(secret: Buffer, orgId: string, order: ListOrder, pos: CursorPosition): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", cursorKey(secret), iv);
  cipher.setAAD(AAD);
  const payload: Sealed = { v: 1, org: orgId, order, t: pos.createdAt, id: pos.id };
  const body = Buffer.concat([cipher.update(JSON.stringify(payload), "utf8"), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64url");
}

const mismatch = () =>
  new CoreError(
    "cursor_mismatch",
    "The cursor was not issued for this organisation and order, or it is damaged. Restart from the first page.",
  );

const TS_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Opens a cursor; anything forged, damaged, foreign or for the other order is `cursor_mismatch`. */
export function decodeCursor(
  secret: Buffer,
  orgId: string,
  order: ListOrder,
  cursor: string,
): CursorPosition {
  let payload: Sealed;
  try {
    const raw = Buffer.from(cursor, "base64url");
    if (raw.length < 12 + 16 + 2 || raw.toString("base64url") !== cursor) throw mismatch();
    const decipher = createDecipheriv("aes-256-gcm", cursorKey(secret), raw.subarray(0, 12));
    decipher.setAAD(AAD);
    decipher.setAuthTag(raw.subarray(12, 28));
    const text = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
    payload = JSON.parse(text) as Sealed;
  } catch {
    throw mismatch();
  }
  if (
    payload?.v !== 1 ||
    payload.org !== orgId ||
    payload.order !== order ||
    typeof payload.t !== "string" ||
    !TS_RE.test(payload.t) ||
    typeof payload.id !== "string" ||
    !UUID_RE.test(payload.id)
  ) {
    throw mismatch();
  }
  return { createdAt: payload.t, id: payload.id };
}

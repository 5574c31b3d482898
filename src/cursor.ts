import { CoreError } from "./errors.js";
import { UUID_RE } from "./ids.js";
import { seal, unseal } from "./seal.js";

/**
 * Opaque, tamper-evident keyset cursors for every paginated list. The position is sealed with
 * AES-256-GCM under a key derived from the server secret, so a client can neither read nor forge
 * one; the organisation and what the cursor is bound to (a list and its order, e.g.
 * `created_at_desc` for memories, `webhook_deliveries` for delivery attempts) are inside the sealed
 * payload and checked on use, so a cursor only works where it was issued.
 */
export type ListOrder = "created_at_desc" | "created_at_asc";

export interface CursorPosition {
  /** created_at at microsecond precision, as exact text from Postgres (ISO 8601, UTC). */
  createdAt: string;
  id: string;
  /**
   * What a list carries from page to page: a count taken on its first page, with a digest of the
   * query it counted (the variant list's `count`; see listVariant).
   */
  count?: { n: number; query: string } | undefined;
}

interface Sealed {
  v: 1;
  org: string;
  order: string;
  t: string;
  id: string;
  n?: number;
  q?: string;
}

// Distinct from the webhook-secret key and bound to this use, so one ciphertext never opens as another.
const PURPOSE = "mnemo:list-cursor";

export function encodeCursor(secret: Buffer, orgId: string, order: string, pos: CursorPosition): string {
  const payload: Sealed = { v: 1, org: orgId, order, t: pos.createdAt, id: pos.id };
  if (pos.count) {
    payload.n = pos.count.n;
    payload.q = pos.count.query;
  }
  return seal(secret, PURPOSE, payload);
}

const mismatch = () =>
  new CoreError(
    "cursor_mismatch",
    "The cursor was not issued for this organisation and order, or it is damaged, or the server key (MNEMO_SECRET_KEY) changed or differs between the server's processes. Restart from the first page.",
    { field: "cursor" },
  );

const TS_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/** Opens a cursor; anything forged, damaged, foreign or for the other order is `cursor_mismatch`. */
export function decodeCursor(
  secret: Buffer,
  orgId: string,
  order: string,
  cursor: string,
  /** What a row id of this list looks like (a UUID unless the list says otherwise). */
  idPattern: RegExp = UUID_RE,
): CursorPosition {
  const payload = unseal(secret, PURPOSE, cursor) as Sealed | undefined;
  if (
    payload?.v !== 1 ||
    payload.org !== orgId ||
    payload.order !== order ||
    typeof payload.t !== "string" ||
    !TS_RE.test(payload.t) ||
    typeof payload.id !== "string" ||
    !idPattern.test(payload.id)
  ) {
    throw mismatch();
  }
  const count =
    Number.isSafeInteger(payload.n) && typeof payload.q === "string"
      ? { n: payload.n as number, query: payload.q }
      : undefined;
  return { createdAt: payload.t, id: payload.id, count };
}

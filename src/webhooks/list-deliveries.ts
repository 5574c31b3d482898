import type { Ctx } from "../context.js";
import { listDeliveries } from "../db/webhooks.js";
import { decodeCursor, encodeCursor } from "./cursor.js";
import { type DeliveryWire, deliveryToWire } from "./model.js";

export interface ListDeliveriesInput {
  limit: number;
  cursor?: string | null | undefined;
}

/** Recent delivery attempts of the caller's organisation, newest first, cursor-paginated. */
export async function listWebhookDeliveries({ ctx, input }: { ctx: Ctx; input: ListDeliveriesInput }) {
  const orgId = ctx.principal.orgId;
  const after = input.cursor ? decodeCursor(ctx.deps.secret, orgId, input.cursor) : null;
  const rows = await listDeliveries(ctx.db, orgId, input.limit + 1, after);
  const hasMore = rows.length > input.limit;
  const page = rows.slice(0, input.limit);
  const last = page.at(-1);
  return {
    object: "list" as const,
    data: page.map(deliveryToWire) as DeliveryWire[],
    has_more: hasMore,
    next_cursor:
      hasMore && last ? encodeCursor(ctx.deps.secret, orgId, { ts: last.cursor_ts, id: last.id }) : null,
  };
}

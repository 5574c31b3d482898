import { requireOrgWide } from "../auth/user-scope.js";
import type { Ctx } from "../context.js";
import { decodeCursor, encodeCursor } from "../cursor.js";
import { listDeliveries } from "../db/webhooks.js";
import type { DeliveryList } from "../wire/webhooks.js";
import { type DeliveryWire, deliveryToWire } from "./model.js";

const CURSOR_BINDING = "webhook_deliveries";

export interface ListDeliveriesInput {
  limit: number;
  cursor?: string | null | undefined;
}

/** Recent delivery attempts of the caller's organisation, newest first, cursor-paginated. */
export async function listWebhookDeliveries({
  ctx,
  input,
}: {
  ctx: Ctx;
  input: ListDeliveriesInput;
}): Promise<DeliveryList> {
  requireOrgWide(ctx.principal, "Listing webhook deliveries");
  const orgId = ctx.principal.orgId;
  const pos = input.cursor ? decodeCursor(ctx.deps.secret, orgId, CURSOR_BINDING, input.cursor) : null;
  const rows = await listDeliveries(ctx.db, orgId, input.limit + 1, pos && { ts: pos.createdAt, id: pos.id });
  const hasMore = rows.length > input.limit;
  const page = rows.slice(0, input.limit);
  const last = page.at(-1);
  return {
    object: "list" as const,
    data: page.map(deliveryToWire) as DeliveryWire[],
    has_more: hasMore,
    next_cursor:
      hasMore && last
        ? encodeCursor(ctx.deps.secret, orgId, CURSOR_BINDING, { createdAt: last.cursor_ts, id: last.id })
        : null,
  };
}

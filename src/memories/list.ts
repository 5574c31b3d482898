import { readUserId } from "../auth/user-scope.js";
import type { Ctx } from "../context.js";
import { decodeCursor, encodeCursor, type ListOrder } from "../cursor.js";
import { listMemoryRows } from "../db/memories.js";
import { CoreError } from "../errors.js";
import { LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX, type MemoryList } from "../wire/memories.js";
import { CONTENT_TYPES, type MemoryType, toWire } from "./model.js";

export interface ListMemoriesInput {
  user_id?: string | null | undefined;
  agent_id?: string | null | undefined;
  conv_id?: string | null | undefined;
  app_id?: string | null | undefined;
  group_id?: string | null | undefined;
  /** One type; default fact, artifact and episode (directives only when asked for by type). */
  type?: MemoryType | null | undefined;
  /** `active` or `superseded` (facts' status; other types are active); default both. */
  status?: "active" | "superseded" | null | undefined;
  cursor?: string | null | undefined;
  limit?: number | undefined;
  order?: ListOrder | undefined;
  /** Fill `details.full_content` on artifact rows. */
  fullContent?: boolean | undefined;
}

export type { MemoryList };

/**
 * Keyset pagination on (created_at, id): the cursor holds the last row's exact position, so rows
 * inserted or deleted between calls never make a page skip or repeat a row that existed
 * throughout. The cursor is sealed with the server secret and bound to the organisation and order.
 */
export async function listMemories({
  ctx,
  input,
}: {
  ctx: Ctx;
  input: ListMemoriesInput;
}): Promise<MemoryList> {
  const limit = input.limit ?? LIST_LIMIT_DEFAULT;
  if (!Number.isInteger(limit) || limit < 1 || limit > LIST_LIMIT_MAX) {
    throw new CoreError("invalid_limit", `limit must be an integer from 1 to ${LIST_LIMIT_MAX}.`, {
      field: "limit",
    });
  }
  const order = input.order ?? "created_at_desc";
  const orgId = ctx.principal.orgId;
  const after = input.cursor ? decodeCursor(ctx.deps.secret, orgId, order, input.cursor) : undefined;
  const rows = await listMemoryRows(ctx.db, {
    orgId,
    types: input.type ? [input.type] : CONTENT_TYPES,
    // Confined credentials: their own rows, or a group's rows when a group is named.
    userId: readUserId(ctx.principal, input.user_id, { groupRead: Boolean(input.group_id) }),
    agentId: input.agent_id,
    convId: input.conv_id,
    appId: input.app_id,
    groupId: input.group_id,
    status: input.status,
    order,
    after,
    limit: limit + 1,
  });
  const hasMore = rows.length > limit;
  const page = hasMore ? rows.slice(0, limit) : rows;
  const last = page.at(-1);
  return {
    object: "list",
    data: page.map((r) => toWire(r, { fullContent: input.fullContent ?? false })),
    has_more: hasMore,
    next_cursor:
      hasMore && last
        ? encodeCursor(ctx.deps.secret, orgId, order, { createdAt: last.cursor_ts, id: last.id })
        : null,
  };
}

import type { Queryable } from "../../src/db/db.js";
import { newGroupId } from "../../src/ids.js";

/**
 * Registers a group row for ingest tests. (The groups issue owns the group verbs; this helper only
 * seeds the table those verbs write, so ingest tests do not depend on their routes.)
 */
export async function seedGroup(
  db: Queryable,
  orgId: string,
  options: { prompt?: string | null; status?: "active" | "archived"; name?: string } = {},
): Promise<string> {
  const id = newGroupId();
  await db.query("INSERT INTO groups (id, org_id, name, prompt, status) VALUES ($1, $2, $3, $4, $5)", [
    id,
    orgId,
    options.name ?? "group",
    options.prompt ?? null,
    options.status ?? "active",
  ]);
  return id;
}

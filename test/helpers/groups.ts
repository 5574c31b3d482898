import type { Deps } from "../../src/context.js";
import { systemCtx } from "../../src/context.js";
import { archiveGroup } from "../../src/groups/archive.js";
import { createGroup } from "../../src/groups/create.js";

/** Registers a group through the group verbs (archived when asked) for ingest tests. */
export async function seedGroup(
  deps: Deps,
  orgId: string,
  options: { prompt?: string | null; status?: "active" | "archived"; name?: string } = {},
): Promise<string> {
  const ctx = systemCtx(deps, orgId, "test-seed-group");
  const group = await createGroup({
    ctx,
    input: { name: options.name ?? "group", prompt: options.prompt ?? null },
  });
  if (options.status === "archived") await archiveGroup({ ctx, input: { id: group.id } });
  return group.id;
}

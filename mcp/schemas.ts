import { z } from "zod";

/*
 * Input fragments of the tools, described for a language model. Output schemas are the wire
 * schemas themselves (src/wire/), so a tool's answer is checked against the REST shape.
 */

/** An optional scope axis; omitted, the configured default applies. */
const axis = (description: string) => z.string().min(1).optional().describe(description);

export const userId = axis("Whose memories: the end user's id. Omit to use the configured default user.");
export const agentId = axis("Agent scope (exact match). Omit to use the configured default agent, if any.");
export const appId = axis("Application scope (exact match). Omit to use the configured default app, if any.");
export const groupIds = z
  .array(z.string())
  .optional()
  .describe(
    "Group ids (grp_...) to read across: rows tagged with any of them. See list_groups. At most 100 by " +
      "default (the server's MNEMO_MAX_GROUP_IDS_PER_QUERY); more is refused with invalid_request.",
  );
export const namespace = z
  .string()
  .max(256)
  .optional()
  .describe(
    "Working context for lessons and procedures (e.g. a repository or project name). Omit to use the default.",
  );
export const memoryId = z
  .string()
  .min(1)
  .describe("The memory id, as returned by search_memory or list_memories.");
export const groupId = z.string().min(1).describe("The group id (grp_...), as returned by list_groups.");

import { z } from "@hono/zod-openapi";
import type { ErrorCode } from "../errors.js";
import { GROUP_NAME_MAX, GROUP_PROMPT_MAX } from "../groups/model.js";
import { DateTime, isBlank, listOf, Str } from "./common.js";

export const GroupSchema = z
  .object({
    id: z.string().openapi({ example: "grp_0123456789abcdef0123456789abcdef" }),
    object: z.literal("group"),
    name: z.string(),
    prompt: z
      .string()
      .nullable()
      .openapi({ description: "Classifier criterion; null marks a catch-all group." }),
    status: z.enum(["active", "archived"]),
    created_at: DateTime,
    updated_at: DateTime,
  })
  .openapi("Group");
export type Group = z.infer<typeof GroupSchema>;

export const GroupListSchema = listOf(GroupSchema, "GroupList");
export type GroupList = z.infer<typeof GroupListSchema>;

/**
 * A name or prompt, trimmed: 1 to `max` characters (code points), one message either way; one of
 * invisible characters only (a zero-width space) is as blank as a space (`empty`).
 */
const Text = (max: number, empty: ErrorCode) => {
  const error = `must be 1 to ${max} characters (not blank)`;
  return (
    Str()
      .trim()
      .min(1, { error })
      .max(max, { error })
      // An empty one failed `min` already: one message, not two.
      .refine((s) => s === "" || !isBlank(s), { error, params: { code: empty } })
  );
};
/** A group's name and prompt as the API takes them (also what `admin import` takes). */
export const GroupName = Text(GROUP_NAME_MAX, "empty_name");
export const GroupPrompt = Text(GROUP_PROMPT_MAX, "empty_prompt");

export const CreateGroupRequest = z
  .object({
    name: GroupName,
    prompt: GroupPrompt.nullable()
      .optional()
      .openapi({ description: "What belongs in the group. Omitted or null: a catch-all group." }),
  })
  .openapi("CreateGroupRequest");

export const UpdateGroupRequest = z
  .object({
    name: GroupName.nullable().optional(),
    prompt: GroupPrompt.nullable()
      .optional()
      .openapi({ description: "Sets the criterion (also on a catch-all group); it can never be removed." }),
    status: z.string().nullable().optional().openapi({
      description: "`active` (un-archives) or `archived`; anything else is 422 `invalid_request`.",
    }),
  })
  .openapi("UpdateGroupRequest");

export const GroupParams = z.object({
  group_id: z
    .string()
    .openapi({ param: { name: "group_id", in: "path" }, example: "grp_0123456789abcdef0123456789abcdef" }),
});

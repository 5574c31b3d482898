import type { GroupRow } from "../db/groups.js";
import { CoreError, quotedId } from "../errors.js";
import { GROUP_ID_RE } from "../ids.js";
import type { Group, GroupList } from "../wire/groups.js";

export type { Group, GroupList };

export const GROUP_NAME_MAX = 120;
export const GROUP_PROMPT_MAX = 2000;

export function toGroupWire(row: GroupRow): Group {
  return {
    id: row.id,
    object: "group",
    name: row.name,
    prompt: row.prompt,
    status: row.status,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** Unknown, malformed and other organisations' ids all read the same. */
export const groupNotFound = (id: string) =>
  new CoreError("group_not_found", `No group ${quotedId(id)} in this organisation.`);

export const isGroupId = (id: string) => GROUP_ID_RE.test(id);

/** Core-side checks of a name or prompt (the REST schema checks them first; MCP may not). */
export function checkText(field: "name" | "prompt", value: string, max: number): string {
  const v = value.trim();
  // Characters are code points, as for every other length limit (an emoji is one, not two).
  const chars = [...v].length;
  if (chars < 1 || chars > max) {
    const code = chars < 1 ? (`empty_${field}` as const) : (`${field}_too_long` as const);
    throw new CoreError(code, `${field} must be 1 to ${max} characters (not blank).`, { field });
  }
  return v;
}

export const quotaExceeded = (max: number) =>
  new CoreError(
    "groups_quota_exceeded",
    `This organisation already has ${max} active groups (MAX_GROUPS_PER_ORG); archive one first.`,
  );

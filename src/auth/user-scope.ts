import type { Principal } from "../context.js";
import type { FilterNode } from "../db/filter-sql.js";
import { CoreError } from "../errors.js";
import { namedValues } from "../memories/filters.js";
import { isBlank } from "../wire/common.js";

/*
 * Credentials that carry a user (a service key minted from a user's token, an operator key made
 * with `--user`, an identity-provider JWT) act for that user within the organisation (spec 5.4):
 * they read and write only that user's memories, jobs and keys. Credentials without a user
 * (operator-made organisation keys, the system context of jobs) act for the whole organisation.
 * Every verb that touches a user's data asks here, so REST and MCP behave the same.
 */

/** The user a credential is confined to, or null for an organisation-wide one. */
export const confinedUser = (p: Principal): string | null => (p.via === "system" ? null : p.userId);

const mismatch = (field: string, asked: string, user: string) =>
  new CoreError(
    "user_mismatch",
    `This credential belongs to user ${JSON.stringify(user)} and can only act for that user; ${field} ${JSON.stringify(asked)} is another user. Omit ${field} or send the credential's own user id.`,
  );

/**
 * The `user_id` a write acts as: a confined credential may only name its own user (another one is
 * 403 `user_mismatch`) and fills it in when omitted.
 */
export function writeUserId(p: Principal, asked: string | null | undefined): string | null | undefined {
  const user = confinedUser(p);
  if (user === null) return asked;
  // A blank user_id names no user: omitted, as everywhere.
  if (asked != null && !isBlank(asked) && asked !== user) throw mismatch("user_id", asked, user);
  return user;
}

/**
 * The `user_id` filter of a read. A confined credential defaults to its own user and may not name
 * another. A group read (the request names groups and no user) stays cross-user, as spec 4.8 rule 3
 * allows: group-tagged rows are the shareable ones, never personal ones.
 */
export function readUserId(
  p: Principal,
  asked: string | null | undefined,
  options: { groupRead?: boolean } = {},
): string | null | undefined {
  const user = confinedUser(p);
  if (user === null) return asked;
  if (asked != null && !isBlank(asked)) {
    if (asked !== user) throw mismatch("user_id", asked, user);
    return asked;
  }
  return options.groupRead ? asked : user;
}

/**
 * The users a read's filter names (variant search and list; an equality or `$in` on `user_id`
 * outside a NOT): for a confined credential, another user is 403 `user_mismatch`, as `user_id` is.
 */
export function readFilterUsers(p: Principal, filter: FilterNode | undefined): void {
  const user = confinedUser(p);
  if (user === null || filter === undefined) return;
  const other = namedValues(filter, "user_id").find((asked) => asked !== user);
  if (other !== undefined) throw mismatch("filters.user_id", other, user);
}

/** Whether a credential may read this row by id: its own, or one shared through a group tag. */
export function mayReadRow(p: Principal, row: { user_id: string | null; group_ids: string[] }): boolean {
  const user = confinedUser(p);
  return user === null || row.user_id === user || row.group_ids.length > 0;
}

/** Whether a credential may change or delete this row: only its own user's rows. */
export function mayWriteRow(p: Principal, row: { user_id: string | null }): boolean {
  const user = confinedUser(p);
  return user === null || row.user_id === user;
}

/**
 * Organisation settings (the webhook, which receives every user's job events) need an
 * organisation-wide credential: a user's key is 403 `forbidden`.
 */
export function requireOrgWide(p: Principal, what: string): void {
  if (confinedUser(p) !== null) {
    throw new CoreError(
      "forbidden",
      `${what} needs an organisation-wide API key (made by the operator); this credential belongs to user ${JSON.stringify(p.userId)}.`,
    );
  }
}

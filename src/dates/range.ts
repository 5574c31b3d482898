/**
 * The instants a date given as ISO 8601 may name: from year 1 (PostgreSQL has no year 0, 1 BC)
 * to the end of year 9999 (past it, the ISO form JavaScript writes, "+010000-...", is not one
 * PostgreSQL reads).
 */
export const FIRST_INSTANT = Date.parse("0001-01-01T00:00:00Z");
export const LAST_INSTANT = Date.parse("9999-12-31T23:59:59.999Z");

/**
 * Whether the `YYYY-MM-DD` a string starts with is a day of the calendar, from year 1: JavaScript
 * reads "2026-02-30" as 2 March and "0000-01-01" as a year PostgreSQL has not.
 */
export function isCalendarDay(value: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})/.exec(value);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const t = new Date(0);
  t.setUTCFullYear(y, mo - 1, d);
  return y >= 1 && t.getUTCFullYear() === y && t.getUTCMonth() === mo - 1 && t.getUTCDate() === d;
}

/**
 * The instants a date given as ISO 8601 may name: from year 1 (PostgreSQL has no year 0, 1 BC)
 * to the end of year 9999 (past it, the ISO form JavaScript writes, "+010000-...", is not one
 * PostgreSQL reads).
 */
export const FIRST_INSTANT = Date.parse("0001-01-01T00:00:00Z");
export const LAST_INSTANT = Date.parse("9999-12-31T23:59:59.999Z");

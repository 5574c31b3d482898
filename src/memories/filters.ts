import { FIRST_INSTANT, LAST_INSTANT } from "../dates/range.js";
import { strptime } from "../dates/strptime.js";
import {
  ARRAY_COLUMNS,
  DATE_COLUMNS,
  type FilterField,
  type FilterNode,
  type Scalar,
  TEXT_COLUMNS,
} from "../db/filter-sql.js";
import { FACT_STATUSES, MEMORY_TYPES } from "../db/memory-row.js";
import { CoreError, type FieldPath, fieldPath } from "../errors.js";
import { IDENT_MAX } from "../wire/common.js";

/**
 * The filter language of the variant search and list forms (spec 4.12): equality, `$eq`, `$ne`,
 * `$in`, `$nin`, `$exists`, `$gt`, `$gte`, `$lt`, `$lte`, `$between`, and `AND`, `OR`, `NOT`
 * (nesting allowed) over the scope axes, `type`, `status`, `categories`, `group_ids`,
 * `created_at`/`updated_at` (ISO 8601) and `metadata.<key>` (a bare unknown key means metadata).
 * `parseFilters` checks the whole tree and returns it as a `FilterNode` (compiled to SQL by
 * src/db/filter-sql.ts); anything it cannot read is a 422 `invalid_filters` naming its path.
 */

export type { FilterNode };

export const FILTER_MAX_DEPTH = 8;
export const FILTER_MAX_NODES = 100;
export const FILTER_MAX_LIST = 100;
export const FILTER_MAX_STRING = 1000;

/**
 * The one cap on the group ids a read names, wherever it names them: the `group_ids` of search and
 * trigger (`resolveScope`) and the `group_ids` operands of a filter (the variant search and list,
 * and the MCP tools with filters). `max` is MNEMO_MAX_GROUP_IDS_PER_QUERY; more is 422
 * `invalid_request` naming `field`, before anything reaches the database: each id is compared with
 * each row's tags, and one search naming 110,000 ids held the embedded database for 67 s.
 */
export function checkGroupIdCount(count: number, max: number, field: string | FieldPath): void {
  if (count <= max) return;
  throw new CoreError(
    "invalid_request",
    `At most ${max} group ids may be named in one search, trigger or list ` +
      `(MNEMO_MAX_GROUP_IDS_PER_QUERY); got ${count}.`,
    { field },
  );
}

const OPS = ["$eq", "$ne", "$in", "$nin", "$exists", "$gt", "$gte", "$lt", "$lte", "$between"] as const;
type Op = (typeof OPS)[number];
/** The axes a filter must pin (like search's scope): equality or `$in` on one of them. */
const SCOPE_AXES = new Set(["user_id", "agent_id", "app_id"]);

/**
 * The values `type` and `status` can hold: an equality, `$ne`, `$in` or `$nin` naming another
 * (`facts`, `Active`) could never match, so it is refused rather than answered with nothing.
 */
const ENUM_VALUES: Partial<Record<(typeof TEXT_COLUMNS)[number], readonly string[]>> = {
  type: MEMORY_TYPES,
  status: FACT_STATUSES,
};

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** A day of the calendar without a time (dayOperator). */
const DAY_RE = /^\d{4}-\d{2}-\d{2}$/;
const DATE_RE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2}))?$/;

class Walker {
  /** Conditions (comparisons of a field) so far: at most FILTER_MAX_NODES. */
  nodes = 0;
  /** AND, OR and NOT so far: not conditions, but held to FILTER_MAX_NODES of their own (each holds up to 100 objects). */
  groups = 0;
  /** Group ids named so far, held to `maxGroupIds` (checkGroupIdCount). */
  groupIds = 0;

  constructor(readonly maxGroupIds: number) {}

  fail(path: FieldPath, message: string): never {
    throw new CoreError("invalid_filters", `${fieldPath(path)}: ${message}`, { field: path });
  }

  count(path: FieldPath) {
    this.nodes += 1;
    if (this.nodes > FILTER_MAX_NODES) {
      this.fail(path, `the filter has more than ${FILTER_MAX_NODES} conditions`);
    }
  }

  group(path: FieldPath) {
    this.groups += 1;
    if (this.groups > FILTER_MAX_NODES) {
      this.fail(path, `the filter has more than ${FILTER_MAX_NODES} AND, OR and NOT groups`);
    }
  }

  object(value: unknown, path: FieldPath, depth: number): FilterNode {
    if (depth > FILTER_MAX_DEPTH) this.fail(path, `nesting deeper than ${FILTER_MAX_DEPTH} levels`);
    if (!isPlainObject(value)) this.fail(path, "expected an object of conditions");
    // An empty object under NOT, AND or OR reads as "every row" (NOT {} as none): a mistake, never
    // a filter anyone means. The whole filter may be {} (no condition).
    if (depth > 1 && Object.keys(value).length === 0) this.fail(path, "expected at least one condition");
    const nodes: FilterNode[] = [];
    for (const [key, v] of Object.entries(value)) {
      const at = [...path, key];
      if (key === "AND" || key === "OR") {
        if (!Array.isArray(v) || v.length === 0) this.fail(at, "expected a non-empty array of filters");
        if (v.length > FILTER_MAX_LIST) this.fail(at, `at most ${FILTER_MAX_LIST} filters`);
        this.group(at);
        nodes.push({
          op: key === "AND" ? "and" : "or",
          nodes: v.map((item, i) => this.object(item, [...at, i], depth + 1)),
        });
      } else if (key === "NOT") {
        this.group(at);
        nodes.push({ op: "not", node: this.object(v, at, depth + 1) });
      } else if (key.startsWith("$")) {
        this.fail(at, `unknown operator \`${key}\` (operators go under a field: {"field": {"$gte": …}})`);
      } else {
        nodes.push(this.condition(fieldOf(key, at, this), v, at));
      }
    }
    return nodes.length === 1 ? nodes[0]! : { op: "and", nodes };
  }

  /** Counts `n` group ids when `field` is `group_ids` (checked before their values are read). */
  namesGroups(field: FilterField, n: number, path: FieldPath) {
    if (field.kind !== "array" || field.column !== "group_ids") return;
    this.groupIds += n;
    checkGroupIdCount(this.groupIds, this.maxGroupIds, path);
  }

  condition(field: FilterField, value: unknown, path: FieldPath): FilterNode {
    if (!isPlainObject(value)) {
      this.count(path);
      this.namesGroups(field, 1, path);
      if (field.kind === "date") {
        const byDay = this.dayOperator(field, "$eq", value, path);
        if (byDay) return byDay;
      }
      return { op: "eq", field, value: this.scalar(field, value, path, "$eq") };
    }
    const keys = Object.keys(value);
    if (keys.length === 0) this.fail(path, "expected at least one operator");
    const nodes = keys.map((k) => this.operator(field, k, value[k], [...path, k]));
    return nodes.length === 1 ? nodes[0]! : { op: "and", nodes };
  }

  operator(field: FilterField, op: string, value: unknown, path: FieldPath): FilterNode {
    if (!(OPS as readonly string[]).includes(op)) {
      this.fail(path, `unknown operator \`${op}\`; use one of ${OPS.join(", ")}`);
    }
    this.count(path);
    const o = op as Op;
    if (field.kind === "date") {
      const byDay = this.dayOperator(field, o, value, path);
      if (byDay) return byDay;
    }
    switch (o) {
      case "$eq":
      case "$ne":
        this.namesGroups(field, 1, path);
        return { op: o === "$eq" ? "eq" : "ne", field, value: this.scalar(field, value, path, o) };
      case "$in":
      case "$nin": {
        if (!Array.isArray(value)) this.fail(path, "expected an array");
        this.namesGroups(field, value.length, path);
        if (value.length > FILTER_MAX_LIST) this.fail(path, `at most ${FILTER_MAX_LIST} values`);
        const values = value.map((v, i) => this.scalar(field, v, [...path, i], o));
        return { op: o === "$in" ? "in" : "nin", field, values };
      }
      case "$exists":
        if (typeof value !== "boolean") this.fail(path, "expected true or false");
        return { op: "exists", field, value };
      case "$between": {
        if (field.kind === "array") this.fail(path, `${o} does not apply to a list field`);
        if (!Array.isArray(value) || value.length !== 2) this.fail(path, "expected [low, high]");
        const lo = this.ordered(field, value[0], [...path, 0]);
        const hi = this.ordered(field, value[1], [...path, 1]);
        if (typeof lo !== typeof hi) this.fail(path, "low and high must be of the same type");
        return { op: "between", field, lo, hi };
      }
      default: {
        if (field.kind === "array") this.fail(path, `${o} does not apply to a list field`);
        const v = this.ordered(field, value, path);
        return { op: o.slice(1) as "gt" | "gte" | "lt" | "lte", field, value: v };
      }
    }
  }

  /**
   * A comparison of a date column with a day of the calendar (`2026-01-31`, no time): the whole
   * day, in UTC. `$eq` is the day, `$ne` any other time, `$lte` and `$between`'s high end take the
   * day in, `$gt` starts after it (`$gte` and `$lt` start at its midnight, as an instant would). A
   * time, or another operator, is left to the general form (undefined).
   */
  dayOperator(field: FilterField, op: Op, value: unknown, path: FieldPath): FilterNode | undefined {
    const isDay = (v: unknown): v is string => typeof v === "string" && DAY_RE.test(v);
    // The day's end: the next midnight (exclusive); after 9999-12-31, the last instant (inclusive).
    const end = (v: string, at: FieldPath) => {
      const next = Date.parse(this.date(v, at)) + 86_400_000;
      const last = next > LAST_INSTANT;
      return { value: new Date(last ? LAST_INSTANT : next).toISOString(), inclusive: last };
    };
    const upTo = (e: ReturnType<typeof end>): FilterNode => ({
      op: e.inclusive ? "lte" : "lt",
      field,
      value: e.value,
    });
    const past = (e: ReturnType<typeof end>): FilterNode => ({
      op: e.inclusive ? "gt" : "gte",
      field,
      value: e.value,
    });
    switch (op) {
      case "$eq":
        if (!isDay(value)) return undefined;
        return {
          op: "and",
          nodes: [{ op: "gte", field, value: this.date(value, path) }, upTo(end(value, path))],
        };
      case "$ne":
        if (!isDay(value)) return undefined;
        return {
          op: "or",
          nodes: [{ op: "lt", field, value: this.date(value, path) }, past(end(value, path))],
        };
      case "$lte":
        return isDay(value) ? upTo(end(value, path)) : undefined;
      case "$gt":
        return isDay(value) ? past(end(value, path)) : undefined;
      case "$between": {
        if (!Array.isArray(value) || value.length !== 2 || !isDay(value[1])) return undefined;
        const lo = this.date(value[0], [...path, 0]);
        return { op: "and", nodes: [{ op: "gte", field, value: lo }, upTo(end(value[1], [...path, 1]))] };
      }
      default:
        return undefined;
    }
  }

  /** An operand of a comparison: a string or number for metadata, a date for dates, a string otherwise. */
  ordered(field: FilterField, value: unknown, path: FieldPath): string | number {
    if (field.kind === "date") return this.date(value, path);
    if (field.kind === "meta" && typeof value === "number") return this.number(value, path);
    if (typeof value !== "string") {
      this.fail(path, field.kind === "meta" ? "expected a string or a number" : "expected a string");
    }
    return this.string(value, path, field.kind === "meta" ? FILTER_MAX_STRING : IDENT_MAX);
  }

  scalar(field: FilterField, value: unknown, path: FieldPath, op: string): Scalar {
    if (field.kind === "date") return this.date(value, path);
    if (field.kind === "meta") {
      if (value === null || typeof value === "boolean") return value;
      if (typeof value === "number") return this.number(value, path);
      if (typeof value === "string") return this.string(value, path);
      this.fail(path, "expected a string, number, boolean or null");
    }
    const allowed = field.kind === "text" ? ENUM_VALUES[field.column] : undefined;
    if (allowed) {
      // type and status always hold one of their values (a row without a status reads as active)
      if (typeof value !== "string" || !allowed.includes(value)) {
        this.fail(path, `expected one of ${allowed.join(", ")}`);
      }
      return value;
    }
    if (value === null && field.kind === "text" && (op === "$eq" || op === "$ne")) return null;
    if (typeof value !== "string") {
      this.fail(
        path,
        Array.isArray(value) ? "expected a string (use $in for a list of values)" : "expected a string",
      );
    }
    return this.string(value, path, IDENT_MAX);
  }

  /** A string operand: identifier columns are held to the identifier limit, metadata values to FILTER_MAX_STRING. */
  string(value: string, path: FieldPath, max = FILTER_MAX_STRING): string {
    if (value.length > max) this.fail(path, `at most ${max} characters`);
    if (value.includes("\u0000") || LONE_SURROGATE.test(value)) {
      this.fail(path, "NUL characters and unpaired surrogates are not allowed");
    }
    return value;
  }

  number(value: number, path: FieldPath): number {
    if (!Number.isFinite(value)) this.fail(path, "expected a finite number");
    return value;
  }

  date(value: unknown, path: FieldPath): string {
    const ms =
      // A day of the calendar (Date.parse reads 2026-02-30 as 2 March), from year 1 (no year 0).
      typeof value === "string" && DATE_RE.test(value) && strptime(value.slice(0, 10), "%Y-%m-%d")
        ? Date.parse(value)
        : Number.NaN;
    // An offset may still carry a day of year 1 into year 0, or one of 9999 into 10000.
    if (Number.isNaN(ms) || ms < FIRST_INSTANT || ms > LAST_INSTANT) {
      this.fail(
        path,
        "expected an ISO 8601 date, a day of the calendar from year 1 to 9999 (2026-01-31, or a time with Z or an offset)",
      );
    }
    return new Date(ms).toISOString();
  }
}

function fieldOf(key: string, path: FieldPath, w: Walker): FilterField {
  if ((TEXT_COLUMNS as readonly string[]).includes(key)) {
    return { kind: "text", column: key as (typeof TEXT_COLUMNS)[number] };
  }
  if ((ARRAY_COLUMNS as readonly string[]).includes(key)) {
    return { kind: "array", column: key as (typeof ARRAY_COLUMNS)[number] };
  }
  if ((DATE_COLUMNS as readonly string[]).includes(key)) {
    return { kind: "date", column: key as (typeof DATE_COLUMNS)[number] };
  }
  const metaKey = key.startsWith("metadata.") ? key.slice("metadata.".length) : key;
  if (metaKey === "" || key === "metadata") w.fail(path, "name a metadata key: `metadata.<key>`");
  w.string(metaKey, path);
  return { kind: "meta", key: metaKey };
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * Checks a filter tree; `path` names it in error messages (`filters`). The verbs pass
 * `maxGroupIds` (MNEMO_MAX_GROUP_IDS_PER_QUERY): the group ids its conditions name, all together.
 */
export function parseFilters(
  value: unknown,
  options: { path?: string; maxGroupIds?: number } = {},
): FilterNode {
  return new Walker(options.maxGroupIds ?? Number.POSITIVE_INFINITY).object(
    value,
    [options.path ?? "filters"],
    1,
  );
}

/**
 * Whether every row the filter can match is pinned to one scope axis: an equality or `$in` on
 * `user_id`, `agent_id`, `app_id` or `group_ids`, in the top-level conjunction or in every branch
 * of an OR. A NOT never pins.
 */
export function pinsScope(node: FilterNode, axis: (f: FilterField) => boolean = isAxis): boolean {
  switch (node.op) {
    case "and":
      return node.nodes.some((n) => pinsScope(n, axis));
    case "or":
      return node.nodes.length > 0 && node.nodes.every((n) => pinsScope(n, axis));
    case "not":
      return false;
    case "eq":
      return axis(node.field) && node.value !== null;
    case "in":
      return axis(node.field) && node.values.length > 0;
    default:
      return false;
  }
}

const isGroups = (f: FilterField) => f.kind === "array" && f.column === "group_ids";
const isAxis = (f: FilterField) => (f.kind === "text" && SCOPE_AXES.has(f.column)) || isGroups(f);

/**
 * Whether every row the filter can match is pinned to named groups (pinsScope on `group_ids`
 * alone): a read of groups, which a credential confined to a user makes across users, as with
 * `group_ids` on search (src/auth/user-scope.ts).
 */
export const pinsGroups = (node: FilterNode): boolean => pinsScope(node, isGroups);

/** The value an equality in the top-level conjunction pins `column` to, if any (context_prompt needs user and conversation). */
export function pinnedValue(node: FilterNode, column: (typeof TEXT_COLUMNS)[number]): string | undefined {
  if (node.op === "and") {
    for (const n of node.nodes) {
      const v = pinnedValue(n, column);
      if (v !== undefined) return v;
    }
    return undefined;
  }
  if (node.op === "eq" && node.field.kind === "text" && node.field.column === column) {
    return typeof node.value === "string" ? node.value : undefined;
  }
  return undefined;
}

/**
 * Every value an equality or `$in` on `column` names anywhere in the tree outside a NOT: the users
 * a read asks for (a confined credential may name only its own, src/auth/user-scope.ts).
 */
export function namedValues(node: FilterNode, column: (typeof TEXT_COLUMNS)[number]): string[] {
  switch (node.op) {
    case "and":
    case "or":
      return node.nodes.flatMap((n) => namedValues(n, column));
    case "eq":
    case "in": {
      if (node.field.kind !== "text" || node.field.column !== column) return [];
      const values: Scalar[] = "values" in node ? node.values : [node.value];
      return values.filter((v): v is string => typeof v === "string");
    }
    default:
      return [];
  }
}

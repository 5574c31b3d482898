/**
 * The filter language's checked tree (built by src/memories/filters.ts) and its compilation to a
 * SQL boolean expression. Values are always appended to `params` and referenced as `$n` with a
 * cast; identifiers come only from the constant column lists below, never from input (a metadata
 * key is a value: `metadata -> $n::text`).
 *
 * `status` is never absent: a row without one (an episode, an artifact) reads as `active`.
 *
 * An atom may yield NULL (an absent column value); NULL reads as false everywhere: AND/OR keep
 * that meaning under Kleene logic, and NOT wraps its operand in `coalesce(…, false)`.
 */
import { LAST_INSTANT } from "../dates/range.js";

export const TEXT_COLUMNS = ["user_id", "agent_id", "conv_id", "app_id", "type", "status"] as const;
export const ARRAY_COLUMNS = ["categories", "group_ids"] as const;
export const DATE_COLUMNS = ["created_at", "updated_at"] as const;

export type FilterField =
  | { kind: "text"; column: (typeof TEXT_COLUMNS)[number] }
  | { kind: "array"; column: (typeof ARRAY_COLUMNS)[number] }
  | { kind: "date"; column: (typeof DATE_COLUMNS)[number] }
  | { kind: "meta"; key: string };

/** A JSON scalar operand (dates arrive as normalised ISO strings). */
export type Scalar = string | number | boolean | null;

export type FilterNode =
  | { op: "and" | "or"; nodes: FilterNode[] }
  | { op: "not"; node: FilterNode }
  | { op: "eq" | "ne"; field: FilterField; value: Scalar }
  | { op: "in" | "nin"; field: FilterField; values: Scalar[] }
  | { op: "exists"; field: FilterField; value: boolean }
  | { op: "gt" | "gte" | "lt" | "lte"; field: FilterField; value: string | number }
  | { op: "between"; field: FilterField; lo: string | number; hi: string | number };

const CMP = { gt: ">", gte: ">=", lt: "<", lte: "<=" } as const;

/** A metadata `$in` of at most this many values also compiles to containments the GIN index serves. */
export const METADATA_IN_PROBES = 8;

/**
 * The end (exclusive) of the millisecond `iso` names; past the last millisecond of year 9999 (whose
 * successor PostgreSQL cannot read in JavaScript's ISO form) PostgreSQL's `infinity`.
 */
function nextMillisecond(iso: string): string {
  const next = Date.parse(iso) + 1;
  return next > LAST_INSTANT ? "infinity" : new Date(next).toISOString();
}

/** The SQL boolean expression for `node` over the table alias `alias` (a constant). */
export function filterSql(node: FilterNode, params: unknown[], alias = "m"): string {
  const p = (v: unknown, cast: string) => {
    params.push(v);
    return `$${params.length}::${cast}`;
  };
  switch (node.op) {
    case "and":
    case "or":
      if (node.nodes.length === 0) return node.op === "and" ? "TRUE" : "FALSE";
      return `(${node.nodes.map((n) => filterSql(n, params, alias)).join(node.op === "and" ? " AND " : " OR ")})`;
    case "not":
      return `(NOT coalesce(${filterSql(node.node, params, alias)}, false))`;
  }
  const f = node.field;
  if (f.kind === "text") {
    // Only facts and directives carry a status; every other row counts as active, as in
    // `GET /v1/memories?status=active` (src/db/memories.ts), so a NULL status reads as 'active'.
    const col = f.column === "status" ? `coalesce(${alias}.status, 'active')` : `${alias}.${f.column}`;
    switch (node.op) {
      case "eq":
        return node.value === null ? `(${col} IS NULL)` : `(${col} = ${p(node.value, "text")})`;
      case "ne":
        return node.value === null
          ? `(${col} IS NOT NULL)`
          : `(${col} IS DISTINCT FROM ${p(node.value, "text")})`;
      case "in":
        return `(${col} = ANY(${p(node.values, "text[]")}))`;
      case "nin":
        return `(NOT coalesce(${col} = ANY(${p(node.values, "text[]")}), false))`;
      case "exists":
        return node.value ? `(${col} IS NOT NULL)` : `(${col} IS NULL)`;
      case "between":
        return `(${col} COLLATE "C" BETWEEN ${p(node.lo, "text")} AND ${p(node.hi, "text")})`;
      default:
        return `(${col} COLLATE "C" ${CMP[node.op]} ${p(node.value, "text")})`;
    }
  }
  if (f.kind === "array") {
    const col = `${alias}.${f.column}`;
    switch (node.op) {
      case "eq":
        return `(${col} @> ${p([node.value], "text[]")})`;
      case "ne":
        return `(NOT (${col} @> ${p([node.value], "text[]")}))`;
      case "in":
        return `(${col} && ${p(node.values, "text[]")})`;
      case "nin":
        return `(NOT (${col} && ${p(node.values, "text[]")}))`;
      case "exists":
        return node.value ? `(cardinality(${col}) > 0)` : `(cardinality(${col}) = 0)`;
      default:
        throw new Error(`filter: ${node.op} on an array column`);
    }
  }
  if (f.kind === "date") {
    // The column holds microseconds; the API shows (and the operands carry) milliseconds. An
    // operand X names the whole millisecond the API shows as X: [X, X + 1 ms). Plain comparisons
    // of the column with bounds, so its indexes serve them.
    const col = `${alias}.${f.column}`;
    const from = (v: Scalar) => p(v, "timestamptz");
    const until = (v: Scalar) => p(nextMillisecond(v as string), "timestamptz");
    const within = (v: Scalar) => `(${col} >= ${from(v)} AND ${col} < ${until(v)})`;
    switch (node.op) {
      case "eq":
        return within(node.value);
      case "ne":
        return `(${col} < ${from(node.value)} OR ${col} >= ${until(node.value)})`;
      case "in":
      case "nin": {
        const any = node.values.length ? `(${node.values.map(within).join(" OR ")})` : "FALSE";
        return node.op === "in" ? any : `(NOT ${any})`;
      }
      case "exists":
        return node.value ? "TRUE" : "FALSE";
      case "between":
        return `(${col} >= ${from(node.lo)} AND ${col} < ${until(node.hi)})`;
      case "gt":
        return `(${col} >= ${until(node.value)})`;
      case "gte":
        return `(${col} >= ${from(node.value)})`;
      case "lt":
        return `(${col} < ${from(node.value)})`;
      case "lte":
        return `(${col} < ${until(node.value)})`;
    }
  }
  const md = `${alias}.metadata`;
  const val = () => `(${md} -> ${p(f.key, "text")})`;
  switch (node.op) {
    case "eq":
      // containment of a scalar under the key is equality with it, and the GIN index serves it
      return `(${md} @> ${p(JSON.stringify({ [f.key]: node.value }), "jsonb")})`;
    case "ne":
      return `(${val()} IS DISTINCT FROM ${p(JSON.stringify(node.value), "jsonb")})`;
    case "in":
    case "nin": {
      if (node.values.length === 0) return node.op === "in" ? "FALSE" : "TRUE";
      const contains = (v: Scalar) => `${md} @> ${p(JSON.stringify({ [f.key]: v }), "jsonb")}`;
      if (node.values.length === 1) {
        return node.op === "in" ? `(${contains(node.values[0]!)})` : `(NOT (${contains(node.values[0]!)}))`;
      }
      // The key's value looked up once in the list: one step per row (hashed from 9 values on),
      // where a containment per value cost ~150 ns each, per row (98 lists of 100 values: 1.5 ms a
      // row, and 0.1-0.25 s planning the 9,800 arms). `->` gives a scalar's jsonb, equal to the
      // operand's exactly when containment would hold (a list or object under the key equals no
      // scalar); a missing key gives NULL, read as false.
      const listed = `(${md} -> ${p(f.key, "text")}) = ANY(${p(
        node.values.map((v) => JSON.stringify(v)),
        "jsonb[]",
      )})`;
      if (node.op === "nin") return `(NOT coalesce(${listed}, false))`;
      // A short list also keeps its containments (after the lookup, so only a row in the list pays
      // for them): a top-level one is a GIN probe per value (a BitmapOr) on PostgreSQL 15-17.
      if (node.values.length > METADATA_IN_PROBES) return `(${listed})`;
      return `(${listed} AND (${node.values.map(contains).join(" OR ")}))`;
    }
    case "exists":
      return node.value ? `(${md} ? ${p(f.key, "text")})` : `(NOT (${md} ? ${p(f.key, "text")}))`;
    default: {
      const numeric = typeof (node.op === "between" ? node.lo : node.value) === "number";
      const key = p(f.key, "text");
      const typed = numeric
        ? `(CASE WHEN jsonb_typeof(${md} -> ${key}) = 'number' THEN (${md} ->> ${key})::numeric END)`
        : `((CASE WHEN jsonb_typeof(${md} -> ${key}) = 'string' THEN ${md} ->> ${key} END) COLLATE "C")`;
      const cast = numeric ? "numeric" : "text";
      if (node.op === "between") return `(${typed} BETWEEN ${p(node.lo, cast)} AND ${p(node.hi, cast)})`;
      return `(${typed} ${CMP[node.op]} ${p(node.value, cast)})`;
    }
  }
}

import type { FilterField, FilterNode, Scalar } from "../../src/db/filter-sql.js";
import type { MemoryRow } from "../../src/db/memory-row.js";

/**
 * The filter language evaluated in memory, written from the documented semantics (not from the
 * SQL), so the property tests can compare the compiled SQL's answer with it.
 */
export function evalFilter(node: FilterNode, row: MemoryRow): boolean {
  switch (node.op) {
    case "and":
      return node.nodes.every((n) => evalFilter(n, row));
    case "or":
      return node.nodes.some((n) => evalFilter(n, row));
    case "not":
      return !evalFilter(node.node, row);
  }
  const f = node.field;
  if (f.kind === "array") {
    const arr = row[f.column] ?? [];
    switch (node.op) {
      case "eq":
        return arr.includes(node.value as string);
      case "ne":
        return !arr.includes(node.value as string);
      case "in":
        return node.values.some((v) => arr.includes(v as string));
      case "nin":
        return !node.values.some((v) => arr.includes(v as string));
      case "exists":
        return node.value === arr.length > 0;
      default:
        throw new Error("unreachable");
    }
  }
  const { present, value } = read(f, row);
  const same = (x: Scalar) => present && value === x;
  switch (node.op) {
    case "eq":
      return f.kind === "text" && node.value === null ? value === null : same(node.value);
    case "ne":
      return f.kind === "text" && node.value === null ? value !== null : !same(node.value);
    case "in":
      return node.values.some(same);
    case "nin":
      return !node.values.some(same);
    case "exists":
      return node.value === (f.kind === "meta" ? present : value !== null);
    case "between":
      return comparable(value, node.lo) && value >= node.lo && value <= node.hi;
    default: {
      const x = node.value;
      if (!comparable(value, x)) return false;
      if (node.op === "gt") return value > x;
      if (node.op === "gte") return value >= x;
      if (node.op === "lt") return value < x;
      return value <= x;
    }
  }
}

function comparable(value: unknown, operand: string | number): value is string | number {
  return value !== null && typeof value === typeof operand;
}

/** The field's value; dates as ISO strings (ms precision), which order like the instants. */
function read(
  f: Exclude<FilterField, { kind: "array" }>,
  row: MemoryRow,
): { present: boolean; value: unknown } {
  // a row without a status (not a fact or directive) counts as active
  if (f.kind === "text" && f.column === "status") return { present: true, value: row.status ?? "active" };
  if (f.kind === "text") return { present: row[f.column] !== null, value: row[f.column] };
  if (f.kind === "date") return { present: true, value: row[f.column].toISOString() };
  const md = row.metadata ?? {};
  const present = Object.hasOwn(md, f.key);
  const v = present ? md[f.key] : undefined;
  // arrays and objects never equal a scalar operand
  return { present, value: v !== null && typeof v === "object" ? Symbol("composite") : v };
}

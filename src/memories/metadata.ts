import { CoreError, type FieldPath, fieldPath } from "../errors.js";

/**
 * Free-form metadata (spec 4.12): a JSON object sent with an ingest and stored on every memory the
 * job writes. Reserved keys are the hosted service's internal ones: silently dropped on ingest,
 * refused (422 `reserved_field`) by a PATCH. Bounds keep one row's metadata small enough to index.
 */
export const RESERVED_METADATA_KEYS = ["tag1", "tag2", "tag3", "tag4", "tag5", "kb_type", "org_id"] as const;
export const METADATA_MAX_KEYS = 64;
export const METADATA_MAX_BYTES = 16 * 1024;
export const METADATA_MAX_DEPTH = 8;

const RESERVED = new Set<string>(RESERVED_METADATA_KEYS);
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** A failure at `path`, each key whole (`["metadata", "a.b"]`: the key `a.b`, not `b` inside `a`). */
const fail = (message: string, path: FieldPath = ["metadata"]) =>
  new CoreError("invalid_metadata", `${fieldPath(path)}: ${message}`, { field: path });

/** Every string (keys included) must be storable as jsonb: no NUL, no unpaired surrogate. */
function checkValue(value: unknown, path: FieldPath, depth: number): void {
  if (depth > METADATA_MAX_DEPTH) throw fail(`nesting deeper than ${METADATA_MAX_DEPTH} levels`, path);
  if (typeof value === "string") {
    if (value.includes("\u0000") || LONE_SURROGATE.test(value)) {
      throw fail("NUL characters and unpaired surrogates are not allowed", path);
    }
  } else if (typeof value === "number") {
    if (!Number.isFinite(value)) throw fail("numbers must be finite", path);
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => {
      checkValue(v, [...path, i], depth + 1);
    });
  } else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      checkValue(k, [...path, k], depth + 1);
      checkValue(v, [...path, k], depth + 1);
    }
  } else if (typeof value !== "boolean" && value !== null) {
    throw fail("only JSON values are allowed", path);
  }
}

/** The bounds every stored metadata object keeps. */
function checkBounds(metadata: Record<string, unknown>): void {
  const keys = Object.keys(metadata);
  if (keys.length > METADATA_MAX_KEYS) throw fail(`at most ${METADATA_MAX_KEYS} keys (got ${keys.length})`);
  for (const k of keys) {
    if (k.length === 0 || k.length > 256) throw fail("keys are 1 to 256 characters", ["metadata", k]);
  }
  checkValue(metadata, ["metadata"], 0);
  const bytes = Buffer.byteLength(JSON.stringify(metadata), "utf8");
  if (bytes > METADATA_MAX_BYTES) throw fail(`at most ${METADATA_MAX_BYTES} bytes as JSON (got ${bytes})`);
}

/** Ingest: reserved keys dropped, the rest checked. */
export function ingestMetadata(raw: Record<string, unknown> | null | undefined): Record<string, unknown> {
  if (!raw) return {};
  const kept = Object.fromEntries(Object.entries(raw).filter(([k]) => !RESERVED.has(k)));
  checkBounds(kept);
  return kept;
}

/** PATCH: reserved keys refused; the merged object must stay within the bounds. */
export function mergeMetadata(
  current: Record<string, unknown>,
  patch: Record<string, unknown>,
): Record<string, unknown> {
  const reserved = Object.keys(patch).filter((k) => RESERVED.has(k));
  if (reserved.length) {
    throw new CoreError(
      "reserved_field",
      `metadata.${reserved[0]}: reserved keys (${RESERVED_METADATA_KEYS.join(", ")}) cannot be set.`,
      { field: ["metadata", reserved[0]!] },
    );
  }
  const merged = { ...current, ...patch };
  checkBounds(merged);
  return merged;
}

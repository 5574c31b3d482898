import { z } from "@hono/zod-openapi";
import { CoreError, type ErrorCode, type FieldPath, fieldPath } from "../errors.js";

/*
 * Fragments every wire schema shares. The schemas under src/wire/ are the one declaration of each
 * request and response shape: the REST routes validate with them and build the OpenAPI document
 * from them, the MCP tools use them as output schemas, and the verbs return their inferred types.
 */

export const NullableString = z.string().nullable();
export const DateTime = z.string().openapi({ format: "date-time", example: "2026-01-01T12:00:00.000Z" });

const NUL_FREE = /^[^\u0000]*$/;

/** Identifiers (user_id, conv_id, group ids, role, dates...) are at most this many characters. */
export const IDENT_MAX = 256;

/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, "g");

const LONE_SURROGATE_MSG =
  "Lone UTF-16 surrogates (an unpaired \\ud800-\\udfff escape) are not allowed; send valid Unicode";

/**
 * A string PostgreSQL can store: a NUL character and a lone UTF-16 surrogate are field errors
 * (identifiers, names). A lone surrogate is legal in JSON text but not in a `jsonb` value, and as
 * `text` the driver would silently turn it into U+FFFD, so an identifier would stop matching itself.
 */
export const Str = () =>
  z
    .string()
    .regex(NUL_FREE, "NUL characters (\\u0000) are not allowed")
    .refine((s) => !LONE_SURROGATE.test(s), { message: LONE_SURROGATE_MSG });

/**
 * Whether a JSON value nests deeper than `levels` below itself (an object or array holding one is
 * a level). Stops looking there, so it never recurses further: a body thousands of levels deep
 * overflows the stack of JSON.stringify and of any walk that follows it down.
 */
export const nestsDeeper = (value: unknown, levels: number): boolean => {
  if (!value || typeof value !== "object") return false;
  if (levels === 0) return true;
  return Object.values(value).some((v) => nestsDeeper(v, levels - 1));
};

/**
 * A free-form JSON object (metadata, filters), passed on as sent. `z.record` builds a new object and
 * skips a `__proto__` key (JSON.parse makes it an own key like any other, and jsonb stores it), so
 * metadata `{"__proto__": "x", "kept": 1}` was stored as `{"kept": 1}` and a top-level filter
 * condition on it vanished, without a word. A value that is no object is an `invalid_type` failure
 * reading `message`. Published as `type: object`.
 */
export const JsonObject = (message = "expected an object") =>
  z
    .unknown()
    .superRefine((v, ctx) => {
      if (v === null || typeof v !== "object" || Array.isArray(v)) {
        ctx.addIssue({ code: "invalid_type", expected: "record", input: v, message });
      }
    })
    .openapi({ type: "object", additionalProperties: {} })
    // zod's own JSON Schema (the MCP tools' input schemas) reads `meta`, the OpenAPI document `openapi`.
    .meta({ type: "object", additionalProperties: {} }) as unknown as z.ZodType<Record<string, unknown>>;

/**
 * Whether a string shows nothing: white space and invisible characters only (format and other
 * default-ignorable ones: U+200B zero-width space, U+FEFF, U+200D, a soft hyphen). `trim()` keeps
 * a zero-width space, so "\u200b" was a user id and a fact's whole text while an NBSP was blank.
 */
export const isBlank = (s: string): boolean => /^[\s\p{Cf}\p{Default_Ignorable_Code_Point}]*$/u.test(s);

/** Whether PostgreSQL can store a string as it is (`Str`'s rules), for values outside a schema. */
export const isStorable = (s: string): boolean => NUL_FREE.test(s) && !LONE_SURROGATE.test(s);

/** An identifier field: `Str` and at most IDENT_MAX characters (an index entry must fit a page). */
export const Ident = () => Str().max(IDENT_MAX);

/**
 * Free text (message content, tool output): a NUL byte is noise and is dropped, and a lone
 * surrogate (a transcript cut in the middle of an emoji) becomes U+FFFD. Never refused.
 */
export const LooseText = () => z.string().transform(looseText);

/** `LooseText`'s cleaning: a NUL byte dropped, a lone surrogate U+FFFD. */
export const looseText = (s: string): string => s.replaceAll("\u0000", "").replace(LONE_SURROGATES, "\uFFFD");

/** Every string of a JSON value, keys included, cleaned as `looseText` cleans free text. */
export function looseDeep(v: unknown): unknown {
  if (typeof v === "string") return looseText(v);
  if (Array.isArray(v)) return v.map(looseDeep);
  if (v && typeof v === "object")
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [looseText(k), looseDeep(x)]));
  return v;
}

const QUERY_TRUE = new Set(["true", "1", "yes", "y", "on", "t"]);
const QUERY_FALSE = new Set(["false", "0", "no", "n", "off", "f"]);

/**
 * A boolean query parameter, spelled as the hosted service's clients spell it (pydantic's set,
 * any case): `true`/`1`/`yes`/`on` or `false`/`0`/`no`/`off`; absent reads false. Python's
 * `requests` sends `params={"wait": True}` as `wait=True`, which was 422. Published as
 * `type: boolean`.
 */
export const QueryBool = z
  .string()
  .optional()
  .refine((v) => v === undefined || QUERY_TRUE.has(v.toLowerCase()) || QUERY_FALSE.has(v.toLowerCase()), {
    message: "must be a boolean: true or false (also 1/0, yes/no, on/off, in any case)",
  })
  .transform((v) => v !== undefined && QUERY_TRUE.has(v.toLowerCase()))
  .openapi({ type: "boolean", default: false });

/**
 * A `limit`: an integer from 1 to `max`, and every failure says so (422 `invalid_limit`; zod's own
 * messages quoted 2^53-1, "received NaN" or ">=1" for a blank value).
 */
export const Limit = (max: number) => {
  const error = `must be an integer from 1 to ${max}`;
  return z.number({ error }).int({ error }).min(1, { error }).max(max, { error });
};

/**
 * `Limit` where it arrives as text (query strings, and the variant list body, which took strings):
 * a string of decimal digits reads as its number; any other string (`0x10`, `1e1`, `+4`, blank, a
 * repeated parameter) is refused, never coerced.
 */
export const DigitsLimit = (max: number) =>
  z.preprocess((v) => (typeof v === "string" && /^[0-9]+$/.test(v) ? Number(v) : v), Limit(max));

/** A cursor-paginated list envelope of `item`, registered as the component `name`. */
export const listOf = <T extends z.ZodType>(item: T, name: string) =>
  z
    .object({
      object: z.literal("list"),
      data: z.array(item),
      has_more: z.boolean(),
      next_cursor: z.string().nullable(),
    })
    .openapi(name);

type Issue = z.core.$ZodIssue;

/** One field failure as the REST 422 body lists it. */
export interface FieldIssue {
  loc: string[];
  msg: string;
  type: string;
}

/** The value at `path` inside `data` (a validation issue's path), or undefined where it stops. */
export function valueAt(data: unknown, path: PropertyKey[]): unknown {
  let v = data;
  for (const k of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<PropertyKey, unknown>)[k];
  }
  return v;
}

/**
 * Whether a type failure is a field left out: nothing at its path in the body as sent, and zod did
 * not see a value there either (a legacy shape rewritten before validation, `filters.user_id: 5`
 * lifted to `user_id`, has a value zod saw and the body as sent does not).
 */
const isMissing = (issue: Issue, data: unknown) =>
  issue.code === "invalid_type" &&
  valueAt(data, issue.path) === undefined &&
  !/received (?!undefined\b|null\b)\w+/.test(issue.message);

/** One zod issue as `{loc, msg, type}`; a missing field reads `type: "missing"`, `msg: "Field required"`. */
export function issueToDetail(target: string, issue: Issue, data: unknown): FieldIssue {
  const loc = [target, ...issue.path.map(String)];
  if (isMissing(issue, data)) {
    return { loc, msg: "Field required", type: "missing" };
  }
  return { loc, msg: issue.message, type: issue.code };
}

/** Field failures as one readable `invalid_request` message: `body.limit: Too big; body.query: ...`. */
export const issuesMessage = (issues: FieldIssue[]) =>
  issues.map((i) => `${i.loc.join(".") || "input"}: ${i.msg}`).join("; ");

/** How one field failed, for choosing its code. */
type FailureKind = "missing" | "too_small" | "too_big" | "other";

/**
 * The spec codes of field failures, by top-level field and how it failed (`*`: any way). A field
 * failure not listed keeps the `[{loc, msg, type}]` form with `invalid_request`. A schema can also
 * name the code of its own refinement with `params: {code}` (the memory PATCH's `immutable_field`).
 */
const FIELD_CODES: Record<string, Partial<Record<FailureKind | "*", ErrorCode>>> = {
  limit: { "*": "invalid_limit" },
  // Not an object at all (an array, a string): the filter parser names deeper failures itself.
  filters: { "*": "invalid_filters" },
  order: { "*": "invalid_order" },
  include: { "*": "unsupported_include_option" },
  mode: { "*": "invalid_mode" },
  type: { "*": "invalid_memory_type" },
  user_id: { missing: "missing_user_id", too_small: "missing_user_id" },
  conv_id: { missing: "missing_conv_id", too_small: "missing_conv_id" },
  query: { missing: "empty_query", too_small: "empty_query", too_big: "query_too_long" },
  name: { too_small: "empty_name", too_big: "name_too_long" },
  prompt: { too_small: "empty_prompt", too_big: "prompt_too_long" },
  namespace: { too_big: "namespace_too_long" },
  task: { too_big: "task_too_long" },
  month: { "*": "invalid_month" },
  url: { too_small: "invalid_webhook_url", too_big: "invalid_webhook_url", other: "invalid_webhook_url" },
};

function failureKind(issue: Issue, data: unknown): FailureKind {
  if (issue.code === "invalid_type") {
    return isMissing(issue, data) || valueAt(data, issue.path) === null ? "missing" : "other";
  }
  if (issue.code === "too_small") return "too_small";
  if (issue.code === "too_big") return "too_big";
  return "other";
}

/** A field failure with its spec code, message and field, when one applies. */
export interface CodedIssue {
  code: ErrorCode;
  message: string;
  field: string;
  /** The field's path, each key whole. */
  path: FieldPath;
}

function codeOf(issue: Issue, data: unknown): ErrorCode | undefined {
  const own = issue.code === "custom" ? (issue.params as { code?: ErrorCode } | undefined)?.code : undefined;
  if (own) return own;
  const top = issue.path[0];
  if (typeof top !== "string") return undefined;
  const rules = FIELD_CODES[top];
  return rules?.[failureKind(issue, data)] ?? rules?.["*"];
}

/** The first failure that has a spec code, as `{code, message, field}`; undefined when none has. */
export function codedIssue(issues: readonly Issue[], data: unknown): CodedIssue | undefined {
  for (const issue of issues) {
    const code = codeOf(issue, data);
    if (!code) continue;
    const field = fieldPath(issue.path);
    const detail = issueToDetail("", issue, data);
    const path = issue.path.map((k) => (typeof k === "number" ? k : String(k)));
    return { code, field, path, message: `${field}: ${detail.msg}` };
  }
  return undefined;
}

/**
 * Checks a request against its wire schema outside HTTP (the in-process MCP tools): the same
 * rules as the REST validation, failing with the same code (`invalid_request` when none applies)
 * and the same field messages.
 */
export function parseWire<S extends z.ZodType>(schema: S, data: unknown, target = "body"): z.output<S> {
  const result = schema.safeParse(data);
  if (result.success) return result.data;
  const coded = codedIssue(result.error.issues, data);
  if (coded) throw new CoreError(coded.code, coded.message, { field: coded.path });
  const issues = result.error.issues.map((i) => issueToDetail(target, i, data));
  throw new CoreError("invalid_request", issuesMessage(issues));
}

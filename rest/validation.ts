import type { Context } from "hono";
import type { z } from "zod";

type Issue = z.core.$ZodIssue;

function valueAt(data: unknown, path: PropertyKey[]): unknown {
  let v = data;
  for (const k of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<PropertyKey, unknown>)[k];
  }
  return v;
}

/** One zod issue as `{loc, msg, type}`; a missing field reads `type: "missing"`, `msg: "Field required"`. */
export function issueToDetail(target: string, issue: Issue, data: unknown) {
  const loc = [target, ...issue.path.map(String)];
  if (issue.code === "invalid_type" && valueAt(data, issue.path) === undefined) {
    return { loc, msg: "Field required", type: "missing" };
  }
  return { loc, msg: issue.message, type: issue.code };
}

/** The OpenAPIHono defaultHook: every validation failure is 422 `{detail: [{loc, msg, type}]}`. */
export function validationHook(
  result: { success: boolean; error?: z.ZodError; target: string; data?: unknown },
  c: Context,
): Response | undefined {
  if (result.success || !result.error) return undefined;
  const target = result.target === "json" ? "body" : result.target === "param" ? "path" : result.target;
  return c.json({ detail: result.error.issues.map((i) => issueToDetail(target, i, result.data)) }, 422);
}

import type { Context } from "hono";
import type { z } from "zod";

type Issue = z.core.$ZodIssue;

/** One zod issue as `{loc, msg, type}`; a missing field reads `type: "missing"`, `msg: "Field required"`. */
export function issueToDetail(target: string, issue: Issue) {
  const loc = [target, ...issue.path.map(String)];
  const missing = issue.code === "invalid_type" && (issue as { input?: unknown }).input === undefined;
  if (missing) return { loc, msg: "Field required", type: "missing" };
  return { loc, msg: issue.message, type: issue.code };
}

/** The OpenAPIHono defaultHook: every validation failure is 422 `{detail: [{loc, msg, type}]}`. */
export function validationHook(
  result: { success: boolean; error?: z.ZodError; target: string },
  c: Context,
): Response | undefined {
  if (result.success || !result.error) return undefined;
  const target = result.target === "json" ? "body" : result.target === "param" ? "path" : result.target;
  return c.json({ detail: result.error.issues.map((i) => issueToDetail(target, i)) }, 422);
}

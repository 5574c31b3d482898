import type { Context } from "hono";
import type { z } from "zod";
import { codedIssue, issueToDetail } from "../src/wire/common.js";
import { validationResponse } from "./errors.js";
import type { AppEnv } from "./types.js";

/** The OpenAPIHono defaultHook: every validation failure is a 422 (rest/errors.ts shapes it). */
export function validationHook(
  result: { success: boolean; error?: z.ZodError; target: string; data?: unknown },
  c: Context<AppEnv>,
): Response | undefined {
  if (result.success || !result.error) return undefined;
  const target = result.target === "json" ? "body" : result.target === "param" ? "path" : result.target;
  const issues = result.error.issues.map((i) => issueToDetail(target, i, result.data));
  return validationResponse(c, issues, codedIssue(result.error.issues, result.data));
}

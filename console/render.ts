import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { JSX } from "hono/jsx/jsx-runtime";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { Chrome } from "./layout.js";
import type { ConsoleEnv } from "./types.js";

export type Ctx = Context<ConsoleEnv>;

/** Sends a whole page (or an htmx fragment with `fragment`). */
export async function page(c: Ctx, node: JSX.Element, status = 200, fragment = false): Promise<Response> {
  const html = await node.toString();
  return c.html(fragment ? html : `<!doctype html>${html}`, status as ContentfulStatusCode);
}

/** What the layout needs from the session; null before sign-in. */
export function chrome(c: Ctx): Chrome | null {
  const csrf = c.get("csrf");
  const principal = c.get("principal");
  return csrf && principal ? { assets: c.get("assets"), csrf, orgId: principal.orgId } : null;
}

/** A posted form: every field as the list of its string values (files ignored). */
export type Form = Record<string, string[]>;

/**
 * The posted body as Hono parses a form (parsed once and kept for the next call). A body that
 * says it is a form and is none (a multipart body without its parts or boundary) is a 400 page,
 * never a 500: the console's forms never send one.
 */
export async function parseForm(
  c: Context,
  all = true,
): Promise<Record<string, string | File | (string | File)[]>> {
  try {
    return await c.req.parseBody({ all });
  } catch (err) {
    throw new HTTPException(400, {
      message:
        "The form could not be read: the body is not a form this console sends. Reload the page and try again.",
      cause: err,
    });
  }
}

export async function readForm(c: Ctx): Promise<Form> {
  const body = await parseForm(c);
  const out: Form = {};
  for (const [k, v] of Object.entries(body)) {
    out[k] = (Array.isArray(v) ? v : [v]).filter((x): x is string => typeof x === "string");
  }
  return out;
}

/** A field's first value, trimmed; undefined when absent or blank. */
export const one = (f: Form, k: string): string | undefined => f[k]?.[0]?.trim() || undefined;

/** A form's single-valued fields, trimmed; blank fields are absent. */
export async function formOf(c: Ctx): Promise<Record<string, string>> {
  const f = await readForm(c);
  const out: Record<string, string> = {};
  for (const k of Object.keys(f)) {
    const v = one(f, k);
    if (v !== undefined) out[k] = v;
  }
  return out;
}

/** All of a field's values (checkbox groups), trimmed, blanks dropped. */
export const many = (f: Form, k: string): string[] => (f[k] ?? []).map((s) => s.trim()).filter(Boolean);

/** Query parameters, blank ones dropped. */
export function queryOf(c: Ctx): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(c.req.query())) if (v.trim() !== "") out[k] = v.trim();
  return out;
}

/** Whether htmx asked (it swaps a fragment in place of a whole page). */
export const isHtmx = (c: Ctx) => c.req.header("hx-request") === "true";

import type { Context } from "hono";
import { setCookie } from "hono/cookie";
import type { Deps } from "../src/context.js";

export const SESSION_COOKIE = "mnemo_session";

/** Whether the browser reached us over HTTPS (directly, or through a trusted TLS proxy). */
export function isHttps(deps: Deps, url: string, forwardedProto: string | undefined): boolean {
  if (new URL(url).protocol === "https:") return true;
  return deps.config.MNEMO_TRUST_PROXY && forwardedProto?.split(",")[0]?.trim().toLowerCase() === "https";
}

/** HttpOnly, SameSite=Strict, scoped to /console, Secure whenever the browser came over HTTPS. */
export function setSessionCookie(c: Context, deps: Deps, value: string, expiresAt: Date): void {
  setCookie(c, SESSION_COOKIE, value, {
    path: "/console",
    httpOnly: true,
    sameSite: "Strict",
    secure: isHttps(deps, c.req.url, c.req.header("x-forwarded-proto")),
    expires: expiresAt,
  });
}

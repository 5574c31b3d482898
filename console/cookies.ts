import type { Context } from "hono";
import { deleteCookie, setCookie } from "hono/cookie";
import type { Deps } from "../src/context.js";

const SESSION = "mnemo_session";
/** Only the origin itself, over HTTPS, can set a `__Host-` cookie: no sibling site can plant one. */
const HOST_SESSION = `__Host-${SESSION}`;
/** Where versions before the `__Host-` cookie scoped theirs; cleared with the current one. */
const OLD_PATH = "/console";

/** What a request carrying two session cookies is told (the sign-in page says it too). */
export const TWO_SESSIONS =
  "Your browser sent two console session cookies, so neither is trusted: another site on this host " +
  "(another port or subdomain) may have set one. You are signed out; sign in again. Over HTTPS the " +
  "console's cookie cannot be set by another site.";

/** Whether the browser reached us over HTTPS (directly, or through a trusted TLS proxy). */
export function isHttps(c: Context, deps: Deps): boolean {
  if (new URL(c.req.url).protocol === "https:") return true;
  const forwardedProto = c.req.header("x-forwarded-proto");
  return deps.config.MNEMO_TRUST_PROXY && forwardedProto?.split(",")[0]?.trim().toLowerCase() === "https";
}

/** The session cookie's name for this request: `__Host-mnemo_session` over HTTPS, else `mnemo_session`. */
const sessionCookieName = (c: Context, deps: Deps) => (isHttps(c, deps) ? HOST_SESSION : SESSION);

/**
 * Every value the request carries under the session cookie's name, in the order sent. A browser
 * sends one cookie per (name, path, domain): a sibling site (another port or subdomain) can add
 * its own session under a longer path, which the browser sends first. Names are split on `,` too,
 * which no cookie value holds, for Cookie headers that a client or proxy joined with commas.
 */
export function sessionCookies(c: Context, deps: Deps): string[] {
  const name = sessionCookieName(c, deps);
  const out: string[] = [];
  for (const pair of (c.req.header("cookie") ?? "").split(/[;,]/)) {
    const eq = pair.indexOf("=");
    if (eq > 0 && pair.slice(0, eq).trim() === name) out.push(pair.slice(eq + 1).trim());
  }
  return out;
}

/** HttpOnly, SameSite=Strict, Path=/; `__Host-` prefixed and Secure whenever the browser came over HTTPS. */
export function setSessionCookie(c: Context, deps: Deps, value: string, expiresAt: Date): void {
  const secure = isHttps(c, deps);
  // The cookie of an earlier version (Path=/console) would otherwise be sent beside this one.
  deleteCookie(c, SESSION, { path: OLD_PATH, secure });
  setCookie(c, secure ? HOST_SESSION : SESSION, value, {
    path: "/",
    httpOnly: true,
    sameSite: "Strict",
    secure,
    expires: expiresAt,
  });
}

/**
 * Clears the session cookie under every path a console cookie can have been set for on the way to
 * this page (`/`, `/console`, `/console/ingest`...): the console's own, an earlier version's, and
 * one a sibling site set for a longer path, when it set it for this host.
 */
export function clearSessionCookies(c: Context, deps: Deps): void {
  const secure = isHttps(c, deps);
  const parts: string[] = [];
  for (const part of new URL(c.req.url).pathname.split("/").filter(Boolean)) {
    // A cookie's Path is written into the header as is: plain segments only, and not many.
    if (!/^[\w.~-]+$/.test(part) || parts.length === 8) break;
    parts.push(part);
  }
  const paths = ["/", ...parts.map((_, i) => `/${parts.slice(0, i + 1).join("/")}`)];
  if (!paths.includes(OLD_PATH)) paths.push(OLD_PATH);
  for (const path of paths) deleteCookie(c, SESSION, { path, secure });
  if (secure) deleteCookie(c, HOST_SESSION, { path: "/", secure: true });
}

import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { refuseUrlNotUtf8 } from "../rest/middleware/body.js";
import { admitPrincipal } from "../src/auth/admit.js";
import type { Deps } from "../src/context.js";
import { CoreError, isCoreError } from "../src/errors.js";
import { csrfMatches, openSession } from "../src/sessions/sessions.js";
import { clearSessionCookies, sessionCookies, TWO_SESSIONS } from "./cookies.js";
import { renderError } from "./pages/errors.js";
import { registerGroupPages } from "./pages/groups.js";
import { registerIngestPages } from "./pages/ingest.js";
import { registerMemoryPages } from "./pages/memories.js";
import { registerSearchPages } from "./pages/search.js";
import { registerSignInPages, registerSignOut } from "./pages/signin.js";
import { registerUsagePages } from "./pages/usage.js";
import { registerWebhookPages } from "./pages/webhook.js";
import { parseForm } from "./render.js";
import type { Assets, ConsoleApp, ConsoleEnv } from "./types.js";

/**
 * Every page's Content-Security-Policy: scripts and styles only from this origin (no inline
 * script or style, no eval), forms only back to this origin, never framed.
 */
export const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

interface Asset {
  body: string;
  type: string;
  path: string;
}

function loadAssets(): Record<keyof Assets, Asset> {
  const require = createRequire(import.meta.url);
  const read = (p: string | URL) => readFileSync(p, "utf8");
  const asset = (name: string, body: string, type: string): Asset => {
    const v = createHash("sha256").update(body).digest("hex").slice(0, 10);
    return { body, type, path: `/console/assets/${name}?v=${v}` };
  };
  return {
    css: asset("console.css", read(new URL("./assets/console.css", import.meta.url)), "text/css"),
    htmx: asset("htmx.min.js", read(require.resolve("htmx.org/dist/htmx.min.js")), "text/javascript"),
  };
}

/**
 * The web console, mounted at /console by the API app: server-rendered pages over the same core
 * verbs as REST. A session (signed in with an API key) stands in for the key header; every request
 * re-reads the session and its key, and counts against the key's rate limit like any other.
 */
export function createConsole(deps: Deps): ConsoleApp {
  const app = new Hono<ConsoleEnv>();
  const files = loadAssets();
  const assets: Assets = { css: files.css.path, htmx: files.htmx.path };

  app.use("*", async (c, next) => {
    c.set("assets", assets);
    await next();
    const h = c.res.headers;
    h.set("Content-Security-Policy", CSP);
    h.set("X-Content-Type-Options", "nosniff");
    h.set("Referrer-Policy", "same-origin");
    h.set("X-Frame-Options", "DENY");
    if (!h.has("Cache-Control")) h.set("Cache-Control", "no-store");
  });
  // A console page typed with a trailing slash ("/console/", "/console/signin/") is the page.
  app.use("*", async (c, next) => {
    const path = new URL(c.req.url).pathname;
    if (c.req.method === "GET" && path.length > 1 && path.endsWith("/"))
      return c.redirect(path.replace(/\/+$/, "") + new URL(c.req.url).search, 308);
    await next();
  });
  app.use(
    "*",
    bodyLimit({
      maxSize: deps.config.MNEMO_MAX_BODY_BYTES,
      onError: () => {
        throw new CoreError(
          "payload_too_large",
          `The form is larger than ${deps.config.MNEMO_MAX_BODY_BYTES} bytes.`,
        );
      },
    }),
  );

  for (const file of Object.values(files)) {
    app.get(file.path.replace(/^\/console/, "").replace(/\?.*$/, ""), (c) => {
      c.header("Cache-Control", "public, max-age=86400");
      c.header("Content-Type", `${file.type}; charset=utf-8`);
      return c.body(file.body);
    });
  }

  registerSignInPages(app, deps);

  // Form fields and query values end up in PostgreSQL text, which cannot hold NUL; a query value
  // must decode to UTF-8 (refuseUrlNotUtf8).
  app.use("*", async (c, next) => {
    if (/%00/i.test(c.req.url))
      throw new CoreError("invalid_request", "NUL characters are not allowed in the URL.");
    refuseUrlNotUtf8(c.req.url);
    if (c.req.method === "POST" && /form/.test(c.req.header("content-type") ?? "")) {
      const form = await parseForm(c);
      if (
        Object.values(form)
          .flat()
          .some((v) => typeof v === "string" && v.includes("\u0000"))
      ) {
        throw new CoreError("invalid_request", "NUL characters are not allowed in form fields.");
      }
    }
    await next();
  });

  // Everything below needs a live session.
  app.use("*", async (c, next) => {
    const sent = sessionCookies(c, deps);
    // Two session cookies: one was planted by a sibling site (another port or subdomain sharing
    // the host's cookies), and nothing says which. Taking either would let that site choose the
    // organisation the visitor's next action lands in, so the browser is signed out instead.
    if (sent.length > 1) throw new CoreError("unauthorized", TWO_SESSIONS);
    const session = await openSession(deps, sent[0]);
    c.set("csrf", session.csrf);
    if (c.req.method !== "GET" && c.req.method !== "HEAD") {
      // A browser states where a request came from; refuse anything not from these pages.
      const site = c.req.header("sec-fetch-site");
      if (site && site !== "same-origin" && site !== "none") {
        throw new CoreError("forbidden", "Cross-site form posts are refused.");
      }
      const form = /form/.test(c.req.header("content-type") ?? "") ? await parseForm(c, false) : {};
      const submitted =
        c.req.header("x-csrf-token") ?? (typeof form._csrf === "string" ? form._csrf : undefined);
      if (!csrfMatches(session.csrf, submitted)) {
        throw new CoreError(
          "forbidden",
          "The form token is missing or stale. Reload the page and try again.",
        );
      }
    }
    const { ctx, headers } = await admitPrincipal(deps, session.principal, session.tier, {
      requestId: c.get("requestId"),
      log: c.get("log").child({ console: true }),
      onPrincipal: (principal, log) => {
        c.set("principal", principal);
        c.set("log", log);
      },
    });
    c.set("ctx", ctx);
    await next();
    for (const [name, value] of Object.entries(headers)) c.res.headers.set(name, value);
  });

  app.get("/", (c) => c.redirect("/console/memories", 303));
  registerSignOut(app, deps);
  registerMemoryPages(app);
  registerSearchPages(app);
  registerIngestPages(app);
  registerGroupPages(app);
  registerWebhookPages(app);
  registerUsagePages(app);

  app.all("*", () => {
    throw new CoreError("not_found", "There is no console page here.");
  });
  app.onError((err, c) => {
    if (isCoreError(err) && err.code === "unauthorized") {
      const two = sessionCookies(c, deps).length > 1;
      clearSessionCookies(c, deps);
      const signin = two ? "/console/signin?two_sessions=1" : "/console/signin";
      // An htmx request (a row polling its job, a tag toggled) would swap the sign-in page into
      // the fragment it asked for: htmx is told to load the sign-in page as a whole page instead.
      if (c.req.header("hx-request") === "true") {
        c.header("HX-Redirect", signin);
        return c.body(null, 401);
      }
      if (c.req.method === "GET") return c.redirect(signin, 303);
    }
    return renderError(c, err);
  });
  return app;
}

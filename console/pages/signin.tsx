import { randomBytes } from "node:crypto";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { Deps } from "../../src/context.js";
import { isCoreError } from "../../src/errors.js";
import { csrfMatches, signIn, signOut } from "../../src/sessions/sessions.js";
import { Notice } from "../components.js";
import { clearSessionCookies, isHttps, sessionCookies, setSessionCookie, TWO_SESSIONS } from "../cookies.js";
import { Layout } from "../layout.js";
import { type Ctx, page, parseForm } from "../render.js";
import type { ConsoleApp } from "../types.js";

/** Before sign-in there is no session to hold a form token: a random cookie is echoed by the form. */
const PRE_COOKIE = "mnemo_signin";

const SignIn = ({
  css,
  token,
  error,
  notice,
}: {
  css: string;
  token: string;
  error?: string;
  notice?: string;
}) => (
  <Layout title="Sign in" chrome={null} css={css}>
    <div class="signin">
      <p class="brand big">
        <span class="logo" aria-hidden="true">
          m
        </span>
        Mnemo console
      </p>
      <h1>Sign in</h1>
      <p class="lead">
        Use an API key or a service key of your organisation. The key stays on the server: your browser only
        keeps a session cookie.
      </p>
      {error ? <Notice kind="error">{error}</Notice> : null}
      {notice ? <Notice kind="ok">{notice}</Notice> : null}
      <form method="post" action="/console/signin" class="stack">
        <input type="hidden" name="_csrf" value={token} />
        <label for="key">API key</label>
        <input
          id="key"
          name="key"
          type="password"
          autocomplete="current-password"
          required
          autofocus
          placeholder="mnemo_..."
        />
        <button type="submit" class="btn primary">
          Sign in
        </button>
      </form>
      <p class="muted small">
        No key yet? An operator makes one with <code>mnemo admin create-key --org ORG_ID</code>; a user signed
        in with your identity provider mints a service key with{" "}
        <code>POST /v1/auth/generate-service-key</code>.
      </p>
    </div>
  </Layout>
);

function preToken(c: Ctx, deps: Deps): string {
  const existing = getCookie(c, PRE_COOKIE);
  if (existing && /^[\w-]{32}$/.test(existing)) return existing;
  const token = randomBytes(24).toString("base64url");
  setCookie(c, PRE_COOKIE, token, {
    path: "/console",
    httpOnly: true,
    sameSite: "Strict",
    secure: isHttps(c, deps),
    maxAge: 3600,
  });
  return token;
}

/**
 * Whether a post comes from this origin's own pages. Browsers say so in `Sec-Fetch-Site`
 * (`same-origin`, or `none` when typed by the user); one that does not send it is judged by its
 * `Origin` against the host asked for (a trusted proxy's `X-Forwarded-Host` too, with
 * MNEMO_TRUST_PROXY; anyone may send the header). Clients that send neither (curl) pass.
 */
function fromThisOrigin(c: Ctx, trustProxy: boolean): boolean {
  const site = c.req.header("sec-fetch-site");
  if (site) return site === "same-origin" || site === "none";
  const origin = c.req.header("origin");
  if (!origin) return true;
  const hosts = [
    trustProxy ? c.req.header("x-forwarded-host") : undefined,
    c.req.header("host"),
    new URL(c.req.url).host,
  ];
  try {
    return hosts.includes(new URL(origin).host);
  } catch {
    return false;
  }
}

export function registerSignInPages(app: ConsoleApp, deps: Deps) {
  app.get("/signin", (c) =>
    page(
      c,
      <SignIn
        css={c.get("assets").css}
        token={preToken(c, deps)}
        notice={c.req.query("signed_out") ? "You are signed out." : undefined}
        error={c.req.query("two_sessions") ? TWO_SESSIONS : undefined}
      />,
    ),
  );

  app.post("/signin", async (c) => {
    // A page of another origin must not sign the browser in with a key of its choosing (login
    // CSRF): the form token alone cannot tell, since a sibling site (another port, another
    // subdomain) may set the cookie it is compared with. The browser says where the post came from.
    if (!fromThisOrigin(c, deps.config.MNEMO_TRUST_PROXY)) {
      return page(
        c,
        <SignIn css={c.get("assets").css} token={preToken(c, deps)} error="Sign in from this page." />,
        403,
      );
    }
    const form = await parseForm(c, false);
    const cookie = getCookie(c, PRE_COOKIE);
    if (!cookie || !csrfMatches(cookie, typeof form._csrf === "string" ? form._csrf : undefined)) {
      return page(
        c,
        <SignIn css={c.get("assets").css} token={preToken(c, deps)} error="The form expired. Try again." />,
        403,
      );
    }
    try {
      const s = await signIn(deps, typeof form.key === "string" ? form.key : "");
      setSessionCookie(c, deps, s.cookie, s.expiresAt);
      deleteCookie(c, PRE_COOKIE, { path: "/console" });
      return c.redirect("/console/memories", 303);
    } catch (err) {
      if (!isCoreError(err) || err.status >= 500) throw err;
      return page(c, <SignIn css={c.get("assets").css} token={cookie} error={err.message} />, err.status);
    }
  });
}

/** Registered behind the session check, so signing out needs the session's form token. */
export function registerSignOut(app: ConsoleApp, deps: Deps) {
  app.post("/signout", async (c) => {
    await signOut(deps, sessionCookies(c, deps)[0]);
    clearSessionCookies(c, deps);
    return c.redirect("/console/signin?signed_out=1", 303);
  });
}

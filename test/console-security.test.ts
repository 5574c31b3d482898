import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOrg } from "../src/admin/orgs.js";
import { createApiKey } from "../src/auth/keys.js";
import { systemCtx } from "../src/context.js";
import { webhookDeliveryStats } from "../src/webhooks/delivery-stats.js";
import { ConsoleClient } from "./helpers/console-client.js";
import { startTestService, type TestService } from "./helpers/harness.js";
import { fact, seed } from "./memories-fixtures.js";

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({
    workers: false,
    env: { MNEMO_RATE_TIERS: JSON.stringify({ tiny: { per_minute: 3, per_day: 1000 } }) },
  });
});
afterAll(async () => {
  await svc?.stop();
});

const PAGES = [
  "/console",
  "/console/memories",
  "/console/search",
  "/console/trigger",
  "/console/ingest",
  "/console/groups",
  "/console/webhook",
  "/console/usage",
];

async function signedIn(key?: string) {
  const org = await svc.newOrg();
  const client = new ConsoleClient(svc.app);
  const res = await client.signIn(key ?? org.key);
  expect(res.status).toBe(303);
  expect(client.csrf).toMatch(/^[\w-]{20,}$/);
  return { ...org, client };
}

describe("console security", () => {
  it("serves no page without a session, nor with a forged cookie", async () => {
    const anon = new ConsoleClient(svc.app);
    for (const path of [...PAGES, "/console/memories/00000000-0000-4000-8000-000000000000"]) {
      const r = await anon.get(path);
      expect(r.status, path).toBe(303);
      expect(r.headers.get("location")).toBe("/console/signin");
    }
    const post = await anon.post("/console/groups", { name: "sneaky" }, { csrf: "x" });
    expect(post.status).toBe(401);
    anon.cookies.set("mnemo_session", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
    expect((await anon.get("/console/memories")).status).toBe(303);
    const bad = await anon.signIn("mn_not_a_real_key_000000000000");
    expect(bad.status).toBe(401);
    expect(anon.cookies.has("mnemo_session")).toBe(false);
  });

  it("sets a strict session cookie and page headers, Secure over HTTPS", async () => {
    const org = await svc.newOrg();
    const client = new ConsoleClient(svc.app);
    const form = await client.get("/console/signin");
    expect(form.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(form.headers.get("content-security-policy")).not.toContain("unsafe-inline");
    expect(form.text).not.toMatch(/<script(?![^>]*\bsrc=)/);
    const token = /name="_csrf" value="([^"]+)"/.exec(form.text)![1]!;
    const res = await client.post("/console/signin", { key: org.key }, { csrf: token });
    const cookie = res.headers.getSetCookie().find((c) => /^mnemo_session=[^;]/.test(c))!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(cookie.split("; ")).toContain("Path=/");
    expect(cookie).toMatch(/Expires=/);
    expect(cookie).not.toMatch(/Secure/);
    expect(cookie).not.toContain(org.key);

    // Over HTTPS the name is `__Host-` prefixed (Secure, Path=/, no Domain): no other site can set it.
    const tls = new ConsoleClient(svc.app, "https://localhost");
    const secure = (await tls.signIn(org.key)).headers.getSetCookie();
    const host = secure.find((c) => c.startsWith("__Host-mnemo_session="))!;
    expect(host.split("; ")).toEqual(expect.arrayContaining(["Path=/", "Secure"]));
    expect(host).not.toMatch(/Domain=/);
    expect(secure.filter((c) => /^mnemo_session=[^;]/.test(c))).toEqual([]);
    expect((await tls.get("/console/memories")).status).toBe(200);
  });

  it("refuses a request carrying two session cookies (one planted by a sibling site), over HTTP and HTTPS", async () => {
    const attacker = await signedIn();
    const victim = await signedIn();
    const jobs = async (key: string) =>
      (await svc.request("GET", "/v1/memories/jobs", { key })).body.data.length as number;
    const planted = attacker.client.cookies.get("mnemo_session")!;
    const own = victim.client.cookies.get("mnemo_session")!;
    // A cookie set for a longer path (/console/ingest) is sent first.
    const both = `mnemo_session=${planted}; mnemo_session=${own}`;
    const page = await svc.app.request("http://localhost/console/ingest", {
      headers: { cookie: both },
      redirect: "manual",
    });
    expect(page.status).toBe(303);
    expect(page.headers.get("location")).toBe("/console/signin?two_sessions=1");
    const cleared = page.headers.getSetCookie();
    for (const path of ["/", "/console", "/console/ingest"]) {
      expect(
        cleared.some((c) => c.startsWith("mnemo_session=;") && c.split("; ").includes(`Path=${path}`)),
        path,
      ).toBe(true);
    }
    const signin = await new ConsoleClient(svc.app).get("/console/signin?two_sessions=1");
    expect(signin.text).toContain("two console session cookies");
    // A form posted with either session's token acts in neither organisation.
    for (const csrf of [attacker.client.csrf, victim.client.csrf]) {
      const body = new URLSearchParams({
        _csrf: csrf,
        user_id: "u",
        conv_id: "c",
        transcript: "User: my bank PIN is 4321",
      });
      const post = await svc.app.request("http://localhost/console/ingest", {
        method: "POST",
        headers: { cookie: both, "content-type": "application/x-www-form-urlencoded" },
        body: body.toString(),
        redirect: "manual",
      });
      expect(post.status).toBe(401);
      expect(await post.text()).toContain("two console session cookies");
    }
    expect(await jobs(attacker.key)).toBe(0);
    expect(await jobs(victim.key)).toBe(0);
    // Each session alone still works: the refusal is of the pair.
    expect((await victim.client.get("/console/ingest")).status).toBe(200);

    // Over HTTPS only the `__Host-` cookie is read: a plain one (which a sibling site can set, as
    // can an earlier version's Path=/console cookie) neither selects an organisation nor conflicts.
    const tls = new ConsoleClient(svc.app, "https://localhost");
    expect((await tls.signIn(victim.key)).status).toBe(303);
    const hosted = tls.cookies.get("__Host-mnemo_session")!;
    const get = (cookie: string) =>
      svc.app.request("https://localhost/console/usage", { headers: { cookie }, redirect: "manual" });
    const mixed = await get(`mnemo_session=${planted}; __Host-mnemo_session=${hosted}`);
    expect(mixed.status).toBe(200);
    expect(await mixed.text()).toContain(victim.orgId);
    const old = await get(`mnemo_session=${own}`);
    expect(old.status).toBe(303);
    expect(old.headers.get("location")).toBe("/console/signin");
    const twice = await get(`__Host-mnemo_session=${hosted}; __Host-mnemo_session=${hosted}`);
    expect(twice.status).toBe(303);
    expect(twice.headers.get("location")).toBe("/console/signin?two_sessions=1");
  });

  it("signs out by clearing the cookie where it was set, and an earlier version's Path=/console one", async () => {
    const { client } = await signedIn();
    const out = await client.post("/console/signout");
    expect(out.status).toBe(303);
    const cleared = out.headers.getSetCookie().filter((c) => c.startsWith("mnemo_session=;"));
    expect(cleared.some((c) => c.split("; ").includes("Path=/"))).toBe(true);
    expect(cleared.some((c) => c.split("; ").includes("Path=/console"))).toBe(true);
  });

  it("refuses a state-changing post without the form token, with a wrong one, or from another site", async () => {
    const { key, client } = await signedIn();
    const groups = async () => (await svc.request("GET", "/v1/groups", { key })).body.data.length;
    expect((await client.post("/console/groups", { name: "a" }, { csrf: null })).status).toBe(403);
    expect((await client.post("/console/groups", { name: "b" }, { csrf: "wrong-token" })).status).toBe(403);
    const cross = await client.post(
      "/console/groups",
      { name: "c" },
      { headers: { "sec-fetch-site": "cross-site" } },
    );
    expect(cross.status).toBe(403);
    expect((await client.post("/console/signout", {}, { csrf: null })).status).toBe(403);
    expect(await groups()).toBe(0);
    const ok = await client.post("/console/groups", { name: "d" });
    expect(ok.status).toBe(303);
    expect(await groups()).toBe(1);
  });

  it("refuses a sign-in posted from another site, even one that set the sign-in cookie (login CSRF)", async () => {
    const org = await svc.newOrg();
    // A sibling site (another port or subdomain) may set the form token's cookie itself.
    const forged = "A".repeat(32);
    const posts: Array<Record<string, string>> = [
      { "sec-fetch-site": "same-site" },
      { "sec-fetch-site": "cross-site" },
      { origin: "http://evil.localhost:18506" },
      // A forwarded host counts only behind a trusted proxy (MNEMO_TRUST_PROXY, off here).
      { origin: "http://evil.localhost:18506", "x-forwarded-host": "evil.localhost:18506" },
    ];
    for (const headers of posts) {
      const client = new ConsoleClient(svc.app);
      const res = await client.post(
        "/console/signin",
        { key: org.key },
        { csrf: forged, headers: { cookie: `mnemo_signin=${forged}`, ...headers } },
      );
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect(res.headers.getSetCookie().some((c) => /^mnemo_session=[^;]/.test(c))).toBe(false);
    }
    // The console's own form, as a browser posts it, still signs in.
    const client = new ConsoleClient(svc.app);
    const form = await client.get("/console/signin");
    const token = /name="_csrf" value="([^"]+)"/.exec(form.text)![1]!;
    const ok = await client.post(
      "/console/signin",
      { key: org.key },
      { csrf: token, headers: { "sec-fetch-site": "same-origin", origin: "http://localhost" } },
    );
    expect(ok.status).toBe(303);
  });

  it("checks ids and limits as the API does, cuts long text between characters, and tells a user's key the webhook is the organisation's", async () => {
    const { orgId, key, client } = await signedIn();
    const long = await client.get(`/console/memories?user_id=${"a".repeat(300)}`);
    expect(long.status).toBe(422);
    const search = await client.post("/console/search", { user_id: "u", query: "tea", limit: "abc" });
    expect(search.text).toMatch(/limit/i);
    expect(search.text).not.toMatch(/No memory|no memories/i);
    await seed(svc, orgId, [fact(`I love ${"a".repeat(150)}${"😀".repeat(40)}`, { user_id: "emoji" })]);
    const listed = await client.get("/console/memories?user_id=emoji");
    expect(listed.status).toBe(200);
    expect(listed.text).not.toContain("\uFFFD");
    expect(listed.text).toContain("😀…");
    const alice = (await createApiKey(svc.deps.db, { orgId, userId: "alice", kind: "service" })).key;
    const own = new ConsoleClient(svc.app);
    expect((await own.signIn(alice)).status).toBe(303);
    const save = await own.post("/console/webhook", {
      url: "https://hooks.example.com/in",
      events: "memory.learning.completed",
    });
    expect(save.status).toBe(403);
    expect(save.text).toContain("The webhook page needs an organisation-wide API key");
    expect(save.text).not.toContain("Listing webhook deliveries");
    expect((await svc.request("GET", "/v1/webhooks", { key })).status).toBe(404);
  });

  it("answers a token pasted into the sign-in form with what to use instead", async () => {
    const client = new ConsoleClient(svc.app);
    const form = await client.get("/console/signin");
    const token = /name="_csrf" value="([^"]+)"/.exec(form.text)![1]!;
    const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1In0.c2lnbmF0dXJlLXNpZ25hdHVyZQ";
    const res = await client.post("/console/signin", { key: jwt }, { csrf: token });
    expect(res.status).toBe(401);
    expect(res.text).toContain("not a token");
    expect(res.text).not.toContain("not configured");
    // The endpoint both pages name exists (they named POST /v1/auth/service-keys, a 405).
    const spec = (await svc.request("GET", "/openapi.json")).body as { paths: Record<string, object> };
    for (const page of [form.text, res.text]) {
      const named = [...page.matchAll(/POST (\/v1\/[a-z/-]+)/g)].map((m) => m[1]!);
      expect([...new Set(named)]).toEqual(["/v1/auth/generate-service-key"]);
      for (const path of named) expect(spec.paths[path], path).toHaveProperty("post");
    }
  });

  it("answers another organisation's ids as not found and changes nothing", async () => {
    const a = await signedIn();
    const b = await svc.newOrg();
    const [m] = await seed(svc, b.orgId, [fact("B's secret fact")]);
    const g = (await svc.request("POST", "/v1/groups", { key: b.key, body: { name: "bg" } })).body
      .id as string;
    const job = await svc.request("POST", "/v1/memories", {
      key: b.key,
      body: { user_id: "u", conv_id: "c", messages: [{ role: "user", content: "I like tea." }] },
    });
    expect(job.status).toBe(202);

    for (const path of [
      `/console/memories/${m!.id}`,
      `/console/memories/${m!.id}/delete`,
      `/console/ingest/jobs/${job.body.id}`,
      `/console/ingest/jobs/${job.body.id}/row`,
    ]) {
      const r = await a.client.get(path);
      expect(r.status, path).toBe(404);
      expect(r.text).not.toContain("B&#39;s secret fact");
      expect(r.text).not.toContain("B's secret fact");
    }
    expect((await a.client.post(`/console/memories/${m!.id}/delete`)).status).toBe(404);
    expect((await a.client.post(`/console/memories/${m!.id}/tags`, { add: g })).status).toBe(404);
    expect((await a.client.post(`/console/groups/${g}/status`, { status: "archived" })).status).toBe(404);
    expect((await a.client.post(`/console/groups/${g}`, { name: "taken" })).status).toBe(404);
    expect((await svc.request("GET", `/v1/memories/${m!.id}`, { key: b.key })).status).toBe(200);
    expect((await svc.request("GET", `/v1/groups/${g}`, { key: b.key })).body).toMatchObject({
      name: "bg",
      status: "active",
    });
    const list = await a.client.get("/console/memories");
    expect(list.text).not.toContain("secret fact");
  });

  it("ends every session of a revoked key on its next request, and on sign-out", async () => {
    const org = await svc.newOrg();
    const second = await createApiKey(svc.deps.db, { orgId: org.orgId, name: "console" });
    const client = new ConsoleClient(svc.app);
    expect((await client.signIn(second.key)).status).toBe(303);
    const other = new ConsoleClient(svc.app);
    expect((await other.signIn(org.key)).status).toBe(303);
    expect((await client.get("/console/memories")).status).toBe(200);

    const revoke = await svc.request("DELETE", `/v1/auth/service-keys/${second.row.id}`, { key: org.key });
    expect(revoke.status).toBe(204);
    const after = await client.get("/console/memories");
    expect(after.status).toBe(303);
    expect(after.headers.get("location")).toBe("/console/signin");
    client.csrf = "irrelevant";
    expect((await client.post("/console/groups", { name: "late" })).status).toBe(401);

    // The other key's session lives on, until it signs out.
    expect((await other.get("/console/memories")).status).toBe(200);
    const stale = other.cookieHeader;
    expect((await other.post("/console/signout")).status).toBe(303);
    const replay = await svc.app.request("http://localhost/console/memories", {
      headers: { cookie: stale },
      redirect: "manual",
    });
    expect(replay.status).toBe(303);
  });

  it("refuses an expired session", async () => {
    const { orgId, client } = await signedIn();
    expect((await client.get("/console/usage")).status).toBe(200);
    // Time passing, on the database clock that the session check uses.
    await svc.deps.db.query(
      "UPDATE console_sessions SET expires_at = now() - interval '1 second' WHERE org_id = $1",
      [orgId],
    );
    const r = await client.get("/console/usage");
    expect(r.status).toBe(303);
    expect(r.headers.get("location")).toBe("/console/signin");
  });

  it("shows HTML in memory text as text, in the list, the memory page and the search context", async () => {
    const { orgId, client } = await signedIn();
    const evil = `<script>alert("x")</script><img src=x onerror=alert(1)> **bold**`;
    const [m] = await seed(svc, orgId, [fact(evil)]);
    const escaped = "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;";
    for (const path of ["/console/memories", `/console/memories/${m!.id}`]) {
      const r = await client.get(path);
      expect(r.status).toBe(200);
      expect(r.text).toContain(escaped);
      expect(r.text).not.toContain("<img src=x");
      expect(r.text).not.toContain('<script>alert("x")');
    }
    const search = await client.post("/console/search", {
      user_id: "u1",
      query: "alert script",
      mode: "compose",
    });
    expect(search.status).toBe(200);
    expect(search.text).toContain("&lt;img src=x onerror=alert(1)&gt;");
    expect(search.text).not.toContain("<img src=x");
    expect(search.text).toContain("<strong>bold</strong>");
  });

  it("counts console requests in usage like any other request", async () => {
    const { key, client } = await signedIn();
    const before = (await svc.request("GET", "/v1/usage", { key })).body.operations.requests as number;
    for (const path of ["/console/memories", "/console/groups", "/console/usage"]) {
      expect((await client.get(path)).status).toBe(200);
    }
    const after = (await svc.request("GET", "/v1/usage", { key })).body.operations.requests as number;
    // three pages and the second usage read
    expect(after - before).toBe(4);
  });

  it("refuses NUL characters in forms and URLs with a 422 page, never a 500", async () => {
    const { key, client } = await signedIn();
    expect((await client.post("/console/groups", { name: "a\u0000b" })).status).toBe(422);
    expect((await client.post("/console/search", { user_id: "u\u0000", query: "x" })).status).toBe(422);
    expect((await client.get("/console/memories?user_id=%00")).status).toBe(422);
    expect((await client.get("/console/memories?user_id=%C3")).status).toBe(422);
    expect((await svc.request("GET", "/v1/groups", { key })).body.data).toEqual([]);
  });

  it("checks search and trigger forms by the API's rules: a 4xx page naming the rule, never a 500", async () => {
    const { client } = await signedIn();
    // 5,000 levels, written as text (JSON.stringify itself overflows the stack on it).
    const deep = `${'{"a":'.repeat(5000)}{}${"}".repeat(5000)}`;
    const trigger = await client.post("/console/trigger", {
      user_id: "u",
      tool: "bash",
      args: `{"nest":${deep}}`,
    });
    expect(trigger.status).toBeLessThan(500);
    expect(trigger.text).toContain("at most 32 levels");
    const task = await client.post("/console/trigger", {
      user_id: "u",
      entities: "x.ts",
      task: "t".repeat(5000),
    });
    expect(task.status).toBeLessThan(500);
    expect(task.text).toMatch(/task/);
    const query = await client.post("/console/search", { user_id: "u", query: "q".repeat(12_000) });
    expect(query.text).toMatch(/4000/);
    const user = await client.post("/console/search", { user_id: "u".repeat(3000), query: "cello" });
    expect(user.text).toMatch(/256/);
  });

  it("answers an ingest submission with a redirect to its job, so a reload submits nothing again", async () => {
    const { key, client } = await signedIn();
    const res = await client.post("/console/ingest", {
      user_id: "u1",
      conv_id: "c-prg",
      transcript: "User: I keep bees on the roof of my building.",
    });
    expect(res.status).toBe(303);
    const location = res.headers.get("location")!;
    expect(location).toMatch(/^\/console\/ingest\?job=job_\w+&user_id=u1&conv_id=c-prg$/);
    const jobId = /job=(job_\w+)/.exec(location)![1]!;
    for (let i = 0; i < 2; i++) {
      const again = await client.get(location);
      expect(again.status).toBe(200);
      expect(again.text).toContain(jobId);
      // the next transcript of the conversation keeps its scope
      expect(again.text).toContain('value="c-prg"');
    }
    const jobs = await svc.request("GET", "/v1/memories/jobs", { key });
    expect(jobs.body.data).toHaveLength(1);
  });

  it("refuses a blank group name, and a blank prompt on a group that has one, instead of saying 'saved'", async () => {
    const { key, client } = await signedIn();
    const prompted = await svc.request("POST", "/v1/groups", {
      key,
      body: { name: "Billing", prompt: "the billing service" },
    });
    const catchAll = await svc.request("POST", "/v1/groups", { key, body: { name: "Everything" } });
    const blankName = await client.post(`/console/groups/${prompted.body.id}`, {
      name: "   ",
      prompt: "the billing service",
    });
    expect(blankName.text).not.toContain("saved");
    expect(blankName.text).toContain("Name must be 1 to 120 characters");
    const blankPrompt = await client.post(`/console/groups/${prompted.body.id}`, {
      name: "Billing",
      prompt: "",
    });
    expect(blankPrompt.text).not.toContain("saved");
    expect(blankPrompt.text).toContain("Prompt must be 1 to 2000 characters");
    const renamed = await client.post(`/console/groups/${catchAll.body.id}`, {
      name: "All of it",
      prompt: "",
    });
    expect(renamed.status).toBe(303);
    expect((await client.get(renamed.headers.get("location")!)).text).toContain(
      "Group “<bdi>All of it</bdi>” saved.",
    );
    const after = await svc.request("GET", `/v1/groups/${prompted.body.id}`, { key });
    expect(after.body).toMatchObject({ name: "Billing", prompt: "the billing service" });
    expect((await svc.request("GET", `/v1/groups/${catchAll.body.id}`, { key })).body).toMatchObject({
      name: "All of it",
      prompt: null,
    });
  });

  it("answers a fragment request (htmx) that fails with a notice for the page, or a whole-page sign-in", async () => {
    const { key, orgId, client } = await signedIn();
    const [m] = await seed(svc, orgId, [fact("tagged fact")]);
    await svc.request("DELETE", `/v1/memories/${m!.id}`, { key });
    const gone = await client.post(
      `/console/memories/${m!.id}/tags`,
      { add: "grp_0123456789abcdef0123456789abcdef" },
      { headers: { "hx-request": "true" } },
    );
    expect(gone.status).toBe(200);
    expect(gone.headers.get("hx-retarget")).toBe("#htmx-notice");
    expect(gone.text).toContain("No memory");
    expect(gone.text).not.toContain("<html");
    await client.post("/console/signout", {});
    const out = await client.get("/console/ingest/jobs/job_x/row", { "hx-request": "true" });
    expect(out.status).toBe(401);
    expect(out.headers.get("hx-redirect")).toBe("/console/signin");
    expect(out.text).not.toContain("password");
  });

  it("takes a page typed with a trailing slash to the page", async () => {
    const { client } = await signedIn();
    for (const [typed, page] of [
      ["/console/", "/console"],
      ["/console/groups/?x=1", "/console/groups?x=1"],
      ["/console/signin/", "/console/signin"],
    ]) {
      const res = await client.get(typed!);
      expect([typed, res.status, res.headers.get("location")]).toEqual([typed, 308, page]);
    }
  });

  it("charts a webhook's deliveries as delivered and failed for good, not counting attempts still retried", async () => {
    const { key, orgId, client } = await signedIn();
    await svc.request("PUT", "/v1/webhooks", { key, body: { url: "https://hooks.example.com/in" } });
    const row = (event: string, attempt: number, outcome: string) =>
      svc.deps.db.query(
        `INSERT INTO webhook_deliveries (id, org_id, event_id, event, url, attempt, outcome)
         VALUES (gen_random_uuid(), $1, $2, 'memory.learning.completed', 'https://hooks.example.com/in', $3, $4)`,
        [orgId, event, attempt, outcome],
      );
    await row("e1", 1, "retrying");
    await row("e1", 2, "delivered");
    await row("e2", 1, "retrying");
    await row("e2", 2, "retrying");
    await row("e3", 1, "failed");
    const page = await client.get("/console/webhook");
    expect(page.status).toBe(200);
    const stats = await webhookDeliveryStats({ ctx: systemCtx(svc.deps, orgId, "t"), input: { days: 1 } });
    expect(stats.days).toEqual([{ day: expect.any(String), delivered: 1, failed: 1 }]);
  });

  it("holds console requests to the key's rate limit", async () => {
    const org = await createOrg(svc.deps.db, { name: "tiny", tier: "tiny" });
    const client = new ConsoleClient(svc.app);
    // Signing in is not counted; its first page is.
    expect((await client.signIn(org.api_key)).status).toBe(303);
    expect((await client.get("/console/groups")).status).toBe(200);
    expect((await client.get("/console/usage")).status).toBe(200);
    const over = await client.get("/console/memories");
    expect(over.status).toBe(429);
    expect(over.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(over.headers.get("content-type")).toContain("text/html");
    expect(over.text).toContain("3 requests per minute");
  });

  it("answers an unknown console path with a page, not JSON", async () => {
    const { client } = await signedIn();
    const r = await client.get("/console/nope");
    expect(r.status).toBe(404);
    expect(r.headers.get("content-type")).toContain("text/html");
  });
});

import { pino } from "pino";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createApiKey } from "../src/auth/keys.js";
import { claimJob, finishJob } from "../src/db/jobs.js";
import { newJobId } from "../src/ids.js";
import { ConsoleClient } from "./helpers/console-client.js";
import { startTestService, type TestService } from "./helpers/harness.js";
import { createGroup, fact, seed } from "./memories-fixtures.js";

/*
 * What a probe of the console found: bodies that are no form, controls a user's key cannot use,
 * whole texts in result tables, API wording in form errors, ids shown as they were sent.
 */

let svc: TestService;
/** Lines logged at warn level and above. */
const logged: string[] = [];
beforeAll(async () => {
  svc = await startTestService({
    workers: false,
    log: pino({ level: "warn" }, { write: (l: string) => logged.push(l) }),
  });
});
afterAll(async () => {
  await svc?.stop();
});
beforeEach(() => {
  logged.length = 0;
});

async function signedIn(key?: string) {
  const org = await svc.newOrg();
  const client = new ConsoleClient(svc.app);
  const res = await client.signIn(key ?? org.key);
  expect(res.status).toBe(303);
  return { ...org, client };
}

/** A raw post with the session's cookie and form token header, and a body as given. */
const rawPost = (client: ConsoleClient | null, path: string, contentType: string, body: string) =>
  svc.app.request(`http://localhost${path}`, {
    method: "POST",
    headers: {
      "content-type": contentType,
      ...(client ? { cookie: client.cookieHeader, "x-csrf-token": client.csrf } : {}),
    },
    body,
    redirect: "manual",
  });

describe("console pages", () => {
  it("answers a body that says it is a form and is none with a 400 page, logging no error", async () => {
    const { client } = await signedIn();
    for (const who of [null, client]) {
      for (const path of ["/console/signin", "/console/groups"]) {
        for (const type of ["multipart/form-data", "multipart/form-data; boundary=xyz"]) {
          const res = await rawPost(who, path, type, "garbage");
          const text = await res.text();
          expect([who ? "session" : "none", path, type, res.status]).toEqual([
            who ? "session" : "none",
            path,
            type,
            400,
          ]);
          expect(res.headers.get("content-type")).toContain("text/html");
          expect(text).toContain("The form could not be read");
        }
      }
    }
    expect(logged.filter((l) => JSON.parse(l).level >= 50)).toEqual([]);
    // The same form, well formed, still works.
    const ok = await rawPost(client, "/console/groups", "application/x-www-form-urlencoded", "name=fine");
    expect(ok.status).toBe(303);
    expect((await client.get(ok.headers.get("location")!)).text).toContain(
      "Group “<bdi>fine</bdi>” created.",
    );
  });

  it("answers each group form with a redirect to the page saying what was done, so a reload posts nothing again", async () => {
    const { key, client } = await signedIn();
    const count = async () =>
      (await svc.request("GET", "/v1/groups?include_archived=true", { key })).body.data.length;
    const created = await client.post("/console/groups", { name: "Reload test" });
    expect(created.status).toBe(303);
    const location = created.headers.get("location")!;
    expect(location).toMatch(/^\/console\/groups\?created=grp_[0-9a-f]+$/);
    const id = new URL(location, "http://x").searchParams.get("created")!;
    // The page after the redirect, loaded twice (a reload): one group, one notice each time.
    for (let i = 0; i < 2; i++) {
      const shown = await client.get(location);
      expect(shown.status).toBe(200);
      expect(shown.text).toContain("Group “<bdi>Reload test</bdi>” created.");
    }
    expect(await count()).toBe(1);
    for (const [path, fields, done, said] of [
      [
        `/console/groups/${id}`,
        { name: "Renamed", prompt: "" },
        "saved",
        "Group “<bdi>Renamed</bdi>” saved.",
      ],
      [
        `/console/groups/${id}/status`,
        { status: "archived" },
        "archived",
        "Group “<bdi>Renamed</bdi>” archived",
      ],
      [
        `/console/groups/${id}/status`,
        { status: "active" },
        "restored",
        "Group “<bdi>Renamed</bdi>” restored.",
      ],
    ] as const) {
      const res = await client.post(path, fields);
      expect(res.status, path).toBe(303);
      expect(res.headers.get("location")).toBe(`/console/groups?${done}=${id}`);
      expect((await client.get(res.headers.get("location")!)).text).toContain(said);
    }
    // A refusal is the page itself, in the form's words, with what was typed.
    const bogus = await client.post(`/console/groups/${id}/status`, { status: "bogus" });
    expect(bogus.status).toBe(422);
    expect(bogus.text).toContain("Status must be active or archived.");
    const blank = await client.post("/console/groups", { name: " ", prompt: "kept prompt" });
    expect(blank.status).toBe(422);
    expect(blank.text).toContain("kept prompt");
    // An id of no group listed here (another organisation's) says nothing.
    const other = await svc.newOrg();
    const theirs = (await svc.request("POST", "/v1/groups", { key: other.key, body: { name: "Theirs" } }))
      .body.id;
    const page = await client.get(`/console/groups?created=${theirs}`);
    expect(page.text).not.toContain("Theirs");
    expect(page.text).not.toContain("created.");
    expect(await count()).toBe(1);
  });

  it("shows a memory's metadata, escaped, and says when there is none", async () => {
    const { orgId, client } = await signedIn();
    const [withMeta, without] = await seed(svc, orgId, [
      fact("Deploys go through the staging cluster.", {
        metadata: { source: "<script>alert(1)</script>", nested: { ticket: 42 } },
      }),
      fact("The wiki lives on the intranet."),
    ]);
    const page = await client.get(`/console/memories/${withMeta!.id}`);
    expect(page.text).toContain("Metadata");
    expect(page.text).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(page.text).not.toContain("<script>alert(1)");
    expect(page.text).toMatch(/ticket[\s\S]{0,80}42/);
    expect((await client.get(`/console/memories/${without!.id}`)).text).toContain(
      "None: the ingest that wrote it sent no metadata.",
    );
  });

  it("offers a user's key no delete, tag or job controls on another user's memory shared through a group", async () => {
    const { orgId, key } = await signedIn();
    const g = await createGroup(svc, key, "shared");
    const other = await createGroup(svc, key, "other");
    const [bobs, alices] = await seed(svc, orgId, [
      fact("Bob shares the deploy checklist.", { user_id: "bob", group_ids: [g], job_id: newJobId() }),
      fact("Alice keeps the runbook.", { user_id: "alice", group_ids: [g], job_id: newJobId() }),
    ]);
    const alice = new ConsoleClient(svc.app);
    const aliceKey = (await createApiKey(svc.deps.db, { orgId, userId: "alice", kind: "service" })).key;
    expect((await alice.signIn(aliceKey)).status).toBe(303);

    const shared = await alice.get(`/console/memories/${bobs!.id}`);
    expect(shared.status).toBe(200);
    expect(shared.text).toContain("Bob shares the deploy checklist.");
    expect(shared.text).not.toContain("Delete…");
    expect(shared.text).not.toContain(">Remove<");
    expect(shared.text).not.toContain("Add to group");
    expect(shared.text).not.toContain(bobs!.job_id!);
    expect(shared.text).toContain("Shared with you through a group");
    const confirm = await alice.get(`/console/memories/${bobs!.id}/delete`);
    expect(confirm.status).toBe(404);
    expect(confirm.text).not.toContain("Delete this memory?");
    expect((await alice.post(`/console/memories/${bobs!.id}/delete`)).status).toBe(404);
    const tag = await alice.post(
      `/console/memories/${bobs!.id}/tags`,
      { add: other },
      { headers: { "hx-request": "true" } },
    );
    expect(tag.text).toContain("No memory");

    // Her own row keeps every control, and the job that wrote it.
    const own = await alice.get(`/console/memories/${alices!.id}`);
    expect(own.text).toContain("Delete…");
    expect(own.text).toContain(">Remove<");
    expect(own.text).toContain("Add to group");
    expect(own.text).toContain(`href="/console/ingest/jobs/${alices!.job_id}"`);
    expect((await alice.get(`/console/memories/${alices!.id}/delete`)).text).toContain("Delete this memory?");
  });

  it("shows the start of a long memory in search results and a job's list, linked to its page", async () => {
    const { orgId, key, client } = await signedIn();
    const long = `Cello practice notes: ${"scales slowly then the etude, ".repeat(400)}`;
    const [m] = await seed(svc, orgId, [fact(long, { user_id: "u1" })]);
    const start = long.slice(0, 179);
    const search = await client.post("/console/search", { user_id: "u1", query: "cello", mode: "retrieve" });
    expect(search.status).toBe(200);
    expect(search.text).toContain(`<a href="/console/memories/${m!.id}">${start}…</a>`);
    expect(search.text).not.toContain(long.slice(0, 400));

    const job = await svc.request("POST", "/v1/memories", {
      key,
      body: { user_id: "u1", conv_id: "c1", messages: [{ role: "user", content: "cello" }] },
    });
    await claimJob(svc.deps.db, job.body.id);
    await finishJob(svc.deps.db, job.body.id, {
      status: "succeeded",
      result: {
        object: "ingest_result",
        memories_created: [{ id: m!.id, type: "fact", text: long }],
        memories_updated: [],
        memories_superseded_by: {},
        stage_timings: { total: 0.01 },
        ignored_group_ids: [],
      },
    });
    for (const path of [`/console/ingest/jobs/${job.body.id}`, `/console/ingest?job=${job.body.id}`]) {
      const page = await client.get(path);
      expect(page.status, path).toBe(200);
      expect(page.text).toContain(`<a href="/console/memories/${m!.id}">${start}…</a>`);
      expect(page.text).not.toContain(long.slice(0, 400));
    }
  });

  it("lists a job's created and updated memories apart, each under its own count", async () => {
    const { orgId, key, client } = await signedIn();
    const [berlin, munich] = await seed(svc, orgId, [
      fact("The user lives in Berlin.", { user_id: "u1" }),
      fact("The user lives in Munich.", { user_id: "u1" }),
    ]);
    const job = await svc.request("POST", "/v1/memories", {
      key,
      body: { user_id: "u1", conv_id: "c1", messages: [{ role: "user", content: "I now live in Munich." }] },
    });
    await claimJob(svc.deps.db, job.body.id);
    await finishJob(svc.deps.db, job.body.id, {
      status: "succeeded",
      result: {
        object: "ingest_result",
        memories_created: [{ id: munich!.id, type: "fact", text: "The user lives in Munich." }],
        memories_updated: [{ id: berlin!.id, type: "fact", text: "The user lives in Berlin." }],
        memories_superseded_by: { [berlin!.id]: munich!.id },
        stage_timings: { total: 0.01 },
        ignored_group_ids: [],
      },
    });
    const page = (await client.get(`/console/ingest/jobs/${job.body.id}`)).text;
    const created = page.indexOf("Memories created (1)");
    const updated = page.indexOf("Memories updated (1)");
    expect(created).toBeGreaterThan(-1);
    expect(updated).toBeGreaterThan(created);
    const munichAt = page.indexOf(`href="/console/memories/${munich!.id}"`);
    const berlinAt = page.indexOf(`href="/console/memories/${berlin!.id}"`);
    expect(munichAt).toBeGreaterThan(created);
    expect(munichAt).toBeLessThan(updated);
    expect(berlinAt).toBeGreaterThan(updated);
    expect(page.slice(berlinAt, berlinAt + 200)).toContain("(superseded)");
    expect(page.slice(munichAt, munichAt + 200)).not.toContain("(superseded)");
    // The recent-jobs table heads its count as a count of memories, not a time.
    const list = await client.get("/console/ingest");
    expect(list.text).toContain('<th scope="col">Memories created</th>');
    expect(list.text).not.toContain('<th scope="col">Created</th>');
  });

  it("answers the ingest page of an unknown job with a 404 as the job's own page does, its id cut", async () => {
    const { client } = await signedIn();
    const long = `job_${"z".repeat(5000)}`;
    for (const path of [`/console/ingest?job=${long}`, `/console/ingest/jobs/${long}`]) {
      const res = await client.get(path);
      expect(res.status, path.slice(0, 40)).toBe(404);
      expect(res.text).toContain(`No ingest job &quot;${long.slice(0, 64)}...&quot;`);
      expect(res.text).not.toContain(long.slice(0, 65));
    }
    const ingest = await client.get("/console/ingest?job=job_unknown");
    expect(ingest.text).toContain('name="transcript"');
  });

  it("says what is wrong with a form in the form's words, and refuses a webhook event it does not offer", async () => {
    const { orgId, key, client } = await signedIn();
    const none = await client.post("/console/webhook", { url: "https://hooks.example.com/in" });
    expect(none.status).toBe(422);
    expect(none.text).toContain("Events: tick at least one event");
    expect(none.text).not.toContain("omit it or send null");
    const bogus = await client.post("/console/webhook", {
      url: "https://hooks.example.com/in",
      events: ["memory.learning.completed", "bogus"],
    });
    expect(bogus.status).toBe(422);
    expect(bogus.text).toContain("Events: &quot;bogus&quot; is not an event this service sends");
    expect(bogus.text).not.toContain("Webhook saved.");
    expect((await svc.request("GET", "/v1/webhooks", { key })).status).toBe(404);

    const [m] = await seed(svc, orgId, [fact("A fact.")]);
    const cases: [string, Promise<{ status: number; text: string }>, string, number?][] = [
      [
        "ingest",
        client.post("/console/ingest", {
          user_id: "u1",
          conv_id: "c1",
          transcript: '[{"role":"user","content":5}]',
        }),
        "Transcript (message 1, text) must be text.",
      ],
      [
        "ingest",
        client.post("/console/ingest", { user_id: "u".repeat(300), conv_id: "c1", transcript: "User: hi" }),
        "User id must be at most 256 characters.",
      ],
      [
        "memories",
        client.get(`/console/memories?user_id=${"a".repeat(300)}`),
        "User must be at most 256 characters.",
      ],
      [
        "search",
        client.post("/console/search", { app_id: "a".repeat(300), query: "tea" }),
        "App must be at most 256 characters.",
      ],
      [
        "search",
        client.post("/console/search", { query: "tea" }),
        "Fill in at least one of User, Agent or App",
      ],
      [
        "trigger",
        client.post("/console/trigger", { user_id: "u", entities: "e".repeat(300) }),
        "Entities (item 1) must be at most 256 characters.",
      ],
      // Errors of the core verbs, not of the schema, are said in the form's words too.
      [
        "trigger",
        client.post("/console/trigger", { user_id: "u" }),
        "Fill in a tool call (Tool, Arguments or Output) or Entities.",
      ],
      [
        "ingest",
        client.post("/console/ingest", { user_id: "u1", conv_id: "c1", transcript: "[]" }),
        "Transcript must not be empty.",
        400,
      ],
      [
        "groups",
        client.post("/console/groups", { name: "n".repeat(121) }),
        "Name must be 1 to 120 characters (not blank).",
      ],
      ["tags", client.post(`/console/memories/${m!.id}/tags`, {}), "Choose a group to add or one to remove."],
      // The limit's rule as REST states it, whatever the number typed.
      ...["9999999", "-1", "2.5", "abc"].map(
        (limit) =>
          [
            "search",
            client.post("/console/search", { user_id: "u", query: "tea", limit }),
            "Limit must be an integer from 1 to 100.",
          ] as [string, Promise<{ status: number; text: string }>, string],
      ),
      // A filter or month the page does not offer is refused as REST refuses it, not ignored.
      [
        "search",
        client.post("/console/search", { user_id: "u", query: "tea", mode: "bogus" }),
        "Mode must be one of compose, retrieve.",
      ],
      [
        "search",
        client.post("/console/search", { user_id: "u", query: "tea", include: "bogus" }),
        "Include (item 1) must be one of fact, artifact,",
      ],
      ["memories", client.get("/console/memories?type=bogus"), "Type must be one of fact,"],
      ["memories", client.get("/console/memories?status=bogus"), "Status must be one of active, superseded."],
      [
        "memories",
        client.get("/console/memories?order=xx"),
        "Order must be one of created_at_desc, created_at_asc.",
      ],
      ["usage", client.get("/console/usage?month=abc"), "Month must be YYYY-MM, year 0001 to 9999."],
      ["usage", client.get("/console/usage?month=2026-13"), "Month must be YYYY-MM, year 0001 to 9999."],
    ];
    for (const [page, answer, says, status] of cases) {
      const res = await answer;
      expect([page, says, res.status]).toEqual([page, says, status ?? 422]);
      const notice = /<div class="notice error"[^>]*>([\s\S]*?)<\/div>/.exec(res.text)?.[1];
      expect(notice).toContain(says);
      expect(notice).not.toMatch(/(body|query)\.\w+|_id|Too big|Invalid input/);
    }
  });

  it("refuses a user's key naming another user with a 403 on every form, in the form's words", async () => {
    const { orgId, key } = await signedIn();
    const alice = new ConsoleClient(svc.app);
    const aliceKey = (await createApiKey(svc.deps.db, { orgId, userId: "alice", kind: "service" })).key;
    expect((await alice.signIn(aliceKey)).status).toBe(303);
    const cases: [string, Promise<{ status: number; text: string }>, string][] = [
      [
        "ingest",
        alice.post("/console/ingest", {
          user_id: "bob",
          conv_id: "c1",
          transcript: "User: my bank PIN is 4321",
        }),
        "This key can act only for user &quot;alice&quot;: enter &quot;alice&quot; as the User id.",
      ],
      [
        "search",
        alice.post("/console/search", { user_id: "bob", query: "pin" }),
        "This key can act only for user &quot;alice&quot;: leave User blank or enter &quot;alice&quot;.",
      ],
      [
        "trigger",
        alice.post("/console/trigger", { user_id: "bob", entities: "deploy.sh" }),
        "This key can act only for user &quot;alice&quot;: leave User blank or enter &quot;alice&quot;.",
      ],
      [
        "memories",
        alice.get("/console/memories?user_id=bob"),
        "This key can act only for user &quot;alice&quot;: leave User blank or enter &quot;alice&quot;.",
      ],
    ];
    for (const [page, answer, says] of cases) {
      const res = await answer;
      expect([page, res.status]).toEqual([page, 403]);
      const notice = /<div class="notice error"[^>]*>([\s\S]*?)<\/div>/.exec(res.text)?.[1];
      expect(notice, page).toBe(says);
    }
    expect((await svc.request("GET", "/v1/memories/jobs", { key })).body.data).toEqual([]);
    // Her own user still ingests.
    const own = await alice.post("/console/ingest", {
      user_id: "alice",
      conv_id: "c1",
      transcript: "User: hi",
    });
    expect(own.status).toBe(303);
  });

  it("shows times as UTC, and the usage page's storage as counts read at a time", async () => {
    const { orgId, client } = await signedIn();
    await seed(svc, orgId, [fact("I like tea.")]);
    const list = await client.get("/console/memories");
    expect(list.text).toMatch(/<time datetime="[^"]+Z" title="[^"]+">\d{4}-\d\d-\d\d \d\d:\d\d UTC<\/time>/);
    const usage = await client.get("/console/usage");
    expect(usage.status).toBe(200);
    const storage = /<h2>Storage<\/h2>([\s\S]*?)<\/section>/.exec(usage.text)?.[1] ?? "";
    expect(storage).toContain("<dt>Active facts</dt><dd>1</dd>");
    expect(storage).not.toMatch(/<dt>as of<\/dt>/i);
    expect(storage).toMatch(/as of <time datetime="[^"]+"[^>]*>[^<]+ UTC<\/time>/);
  });

  it("isolates ids and group names shown inline, so a right-to-left override in one reverses nothing after it", async () => {
    const { orgId, key, client } = await signedIn();
    const rlo = "\u202E";
    const user = `ali${rlo}ce`;
    const g = await createGroup(svc, key, `${rlo}team`);
    const [m] = await seed(svc, orgId, [
      fact("I like tea.", { user_id: user, conv_id: "c1", group_ids: [g] }),
    ]);
    const list = await client.get("/console/memories");
    expect(list.text).toContain(`<bdi>${user}</bdi><span class="muted"> · <bdi>c1</bdi></span>`);
    expect(list.text).toContain(`<span class="tag"><bdi>${rlo}team</bdi></span>`);
    const one = await client.get(`/console/memories/${m!.id}`);
    expect(one.text).toContain(`<dd class="mono"><bdi>${user}</bdi></dd>`);
    expect(one.text).toContain(`<span class="tag"><bdi>${rlo}team</bdi></span>`);
    const created = await client.post("/console/groups", { name: `${rlo}crew` });
    expect((await client.get(created.headers.get("location")!)).text).toContain(
      `Group “<bdi>${rlo}crew</bdi>” created.`,
    );
    for (const path of ["/console/search", "/console/ingest"]) {
      expect((await client.get(path)).text, path).toContain(`<bdi>${rlo}team</bdi>`);
    }
  });
});

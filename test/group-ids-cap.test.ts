import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";
import { systemCtx } from "../src/context.js";
import { writeMemories } from "../src/memories/write.js";
import { startTestService, type TestService } from "./helpers/harness.js";
import { callErr, callOk, httpClient } from "./helpers/mcp-client.js";

/**
 * One cap on the group ids a read names (MNEMO_MAX_GROUP_IDS_PER_QUERY, default 100), on every
 * read that takes them: search (current and legacy shapes), trigger, the variant search and list
 * (group ids in their filters), and the MCP tools, which share the core check. One search naming
 * 110,000 ids (0.99 MB, under the body limit) held the embedded database for 67 s.
 */
let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ workers: false });
});
afterAll(async () => {
  await svc?.stop();
});

const CAP = 100;
const gid = (i: number) => `grp_${i.toString(16).padStart(32, "0")}`;
const groups = (n: number) => Array.from({ length: n }, (_, i) => gid(i));

/** A 422 in the spec's envelope: `invalid_request`, naming the limit and the field. */
function expectCapped(res: { status: number; body: any }, field: string, cap = CAP) {
  expect(res.status, JSON.stringify(res.body)).toBe(422);
  expect(res.body.detail).toMatchObject({ code: "invalid_request", field });
  expect(res.body.detail.message).toContain(`At most ${cap} group ids`);
  expect(res.body.detail.message).toContain("MNEMO_MAX_GROUP_IDS_PER_QUERY");
  expect(res.body.error).toMatchObject({ type: "invalid_request_error", code: "invalid_request" });
}

async function seededOrg() {
  const org = await svc.newOrg();
  await svc.deps.db.query("UPDATE organisations SET tier = 'unlimited' WHERE id = $1", [org.orgId]);
  await writeMemories(systemCtx(svc.deps, org.orgId, "seed"), [
    { type: "fact", text: "The team drinks green tea", user_id: "u1", group_ids: [gid(CAP - 1)] },
    {
      type: "lesson",
      text: "Run the migrations before starting the API server.",
      user_id: "u1",
      group_ids: [gid(CAP - 1)],
      trigger_entities: ["migrate.ts"],
      outcome: "resolved",
    },
  ]);
  return org;
}

describe("MNEMO_MAX_GROUP_IDS_PER_QUERY", () => {
  it("defaults to 100 and takes 1 to 1000", () => {
    expect(loadConfig({}).MNEMO_MAX_GROUP_IDS_PER_QUERY).toBe(100);
    expect(loadConfig({ MNEMO_MAX_GROUP_IDS_PER_QUERY: "1000" }).MNEMO_MAX_GROUP_IDS_PER_QUERY).toBe(1000);
    for (const bad of ["0", "1001", "ten"]) {
      expect(() => loadConfig({ MNEMO_MAX_GROUP_IDS_PER_QUERY: bad })).toThrow(ConfigError);
      expect(() => loadConfig({ MNEMO_MAX_GROUP_IDS_PER_QUERY: bad })).toThrow(
        /MNEMO_MAX_GROUP_IDS_PER_QUERY/,
      );
    }
  });
});

describe("REST reads with group ids", () => {
  it("search: cap+1 group_ids is 422 invalid_request, exactly the cap is served", async () => {
    const { key } = await seededOrg();
    const search = (body: unknown) => svc.request("POST", "/v1/memories/search", { key, body });
    expectCapped(await search({ query: "tea", mode: "retrieve", group_ids: groups(CAP + 1) }), "group_ids");
    // The legacy shape (mode rows, user in filters) goes through the same check.
    expectCapped(
      await search({ query: "tea", mode: "rows", filters: { user_id: "u1" }, group_ids: groups(CAP + 1) }),
      "group_ids",
    );
    // The request of the incident: 110,000 ids, refused before the database is asked.
    const flood = Array.from({ length: 110_000 }, (_, i) => `g${i}`);
    expectCapped(await search({ query: "tea", mode: "retrieve", group_ids: flood }), "group_ids");

    const ok = await search({ query: "tea", mode: "retrieve", group_ids: groups(CAP) });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.data.map((m: { text: string }) => m.text)).toEqual(["The team drinks green tea"]);
    // The cap counts distinct ids.
    const twice = await search({
      query: "tea",
      mode: "retrieve",
      group_ids: [...groups(CAP), groups(CAP)[0]!],
    });
    expect(twice.status, twice.text).toBe(200);
  });

  it("trigger: cap+1 group_ids is 422 invalid_request, exactly the cap is served", async () => {
    const { key } = await seededOrg();
    const trigger = (body: unknown) => svc.request("POST", "/v1/memories/trigger", { key, body });
    expectCapped(
      await trigger({ entities: ["migrate.ts"], mode: "retrieve", group_ids: groups(CAP + 1) }),
      "group_ids",
    );
    const ok = await trigger({ entities: ["migrate.ts"], mode: "retrieve", group_ids: groups(CAP) });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.data.map((m: { type: string }) => m.type)).toEqual(["lesson"]);
  });

  it("variant list and search: group ids in the filters count, all conditions together", async () => {
    const { key } = await seededOrg();
    const list = (filters: unknown) => svc.request("POST", "/v1/memories/", { key, body: { filters } });
    const search = (filters: unknown) =>
      svc.request("POST", "/v1/memories/search/", { key, body: { query: "tea", filters } });
    const over = { group_ids: { $in: groups(CAP + 1) } };
    expectCapped(await list(over), "filters.group_ids.$in");
    expectCapped(await search(over), "filters.group_ids.$in");
    // Split over two conditions, the total still counts.
    const split = {
      OR: [
        { group_ids: { $in: groups(CAP + 1).slice(0, 60) } },
        { group_ids: { $in: groups(CAP + 1).slice(60) } },
      ],
    };
    expectCapped(await list(split), "filters.OR[1].group_ids.$in");
    expectCapped(await search(split), "filters.OR[1].group_ids.$in");

    const exact = { group_ids: { $in: groups(CAP) } };
    const listed = await list(exact);
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.count).toBe(2);
    const found = await search(exact);
    expect(found.status, found.text).toBe(200);
    expect(found.body.results.map((m: { memory: string }) => m.memory)).toContain(
      "The team drinks green tea",
    );
  });

  it("publishes the bound in the OpenAPI document", async () => {
    const doc = (await svc.request("GET", "/openapi.json")).body;
    for (const name of ["SearchRequest", "TriggerRequest"]) {
      const field = doc.components.schemas[name].properties.group_ids;
      expect(JSON.stringify(field), name).toContain("MNEMO_MAX_GROUP_IDS_PER_QUERY");
      expect(JSON.stringify(field), name).toContain('"maxItems":1000');
    }
    for (const path of [
      "/v1/memories/search",
      "/v1/memories/trigger",
      "/v1/memories/search/",
      "/v1/memories/",
    ]) {
      expect(doc.paths[path].post.responses["422"].description, path).toContain("`invalid_request`");
    }
  });
});

describe("MCP tools with group ids (Streamable HTTP)", () => {
  it("search_memory and recall_directives: cap+1 group ids is invalid_request, the cap is served", async () => {
    const { key } = await seededOrg();
    const client = await httpClient({
      url: "http://mnemo.test/mcp",
      app: svc.app,
      headers: { "x-api-key": key },
    });
    const { tools } = await client.listTools();
    const capped = (text: string) => {
      expect(text).toMatch(/^Error invalid_request: /);
      expect(text).toContain(`At most ${CAP} group ids`);
    };
    capped(
      await callErr(client, "search_memory", { query: "tea", mode: "retrieve", group_ids: groups(CAP + 1) }),
    );
    // With filters the group ids join the filter; the same cap.
    capped(
      await callErr(client, "search_memory", {
        query: "tea",
        group_ids: groups(CAP + 1),
        filters: { "metadata.topic": "x" },
      }),
    );
    capped(
      await callErr(client, "recall_directives", { entities: ["migrate.ts"], group_ids: groups(CAP + 1) }),
    );

    const found = await callOk(client, tools, "search_memory", {
      query: "tea",
      mode: "retrieve",
      group_ids: groups(CAP),
    });
    expect(found.structured.data.map((m: { text: string }) => m.text)).toEqual(["The team drinks green tea"]);
    const recalled = await callOk(client, tools, "recall_directives", {
      entities: ["migrate.ts"],
      mode: "retrieve",
      group_ids: groups(CAP),
    });
    expect(recalled.structured.data).toHaveLength(1);
    await client.close();
  });
});

describe("a configured cap", () => {
  let small: TestService;
  beforeAll(async () => {
    small = await startTestService({ workers: false, env: { MNEMO_MAX_GROUP_IDS_PER_QUERY: "3" } });
  });
  afterAll(async () => {
    await small?.stop();
  });

  it("is the one REST and MCP are held to", async () => {
    const { key } = await small.newOrg();
    const search = (group_ids: string[]) =>
      small.request("POST", "/v1/memories/search", { key, body: { query: "tea", group_ids } });
    expectCapped(await search(groups(4)), "group_ids", 3);
    expect((await search(groups(3))).status).toBe(200);
    const listed = await small.request("POST", "/v1/memories/", {
      key,
      body: {
        filters: {
          OR: [{ group_ids: gid(0) }, { group_ids: { $in: groups(3).slice(1) } }, { group_ids: gid(9) }],
        },
      },
    });
    expectCapped(listed, "filters.OR[2].group_ids", 3);

    const client = await httpClient({
      url: "http://mnemo.test/mcp",
      app: small.app,
      headers: { "x-api-key": key },
    });
    const { tools } = await client.listTools();
    expect(await callErr(client, "search_memory", { query: "tea", group_ids: groups(4) })).toMatch(
      /invalid_request: At most 3 group ids/,
    );
    await callOk(client, tools, "search_memory", { query: "tea", group_ids: groups(3) });
    await client.close();
  });
});

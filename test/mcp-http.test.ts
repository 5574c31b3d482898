import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callBoundMs } from "../mcp/http.js";
import { BoundedJsonTransport } from "../mcp/json-transport.js";
import { createApiKey } from "../src/auth/keys.js";
import { systemCtx } from "../src/context.js";
import { writeMemories } from "../src/memories/write.js";
import { startTestService, type TestService } from "./helpers/harness.js";
import { callErr, callOk, httpClient, TOOL_NAMES } from "./helpers/mcp-client.js";

let svc: TestService;
const URL_ = "http://mnemo.test/mcp";

beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.stop();
});

/** `promise`, or a failure after `ms`: a request that hangs fails its test instead of the run. */
function within<T>(ms: number, promise: PromiseLike<T> | T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

async function connect(key: string, headers: Record<string, string> = {}) {
  const client = await httpClient({ url: URL_, app: svc.app, headers: { "x-api-key": key, ...headers } });
  const { tools } = await client.listTools();
  return { client, tools };
}

describe("MCP over Streamable HTTP (in-process)", () => {
  it("lists every tool with a described input schema, an output schema and annotations", async () => {
    const { key } = await svc.newOrg();
    const { client, tools } = await connect(key);
    expect(tools.map((t) => t.name).sort()).toEqual([...TOOL_NAMES].sort());
    for (const t of tools) {
      expect(t.description?.length, t.name).toBeGreaterThan(30);
      expect(t.inputSchema.type).toBe("object");
      expect(t.outputSchema?.type, t.name).toBe("object");
      for (const hint of ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"] as const) {
        expect(typeof t.annotations?.[hint], `${t.name}.${hint}`).toBe("boolean");
      }
      for (const [field, schema] of Object.entries(t.inputSchema.properties ?? {})) {
        expect((schema as { description?: string }).description, `${t.name}.${field}`).toBeTruthy();
      }
    }
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(byName.delete_memory!.annotations?.destructiveHint).toBe(true);
    expect(byName.search_memory!.annotations?.readOnlyHint).toBe(true);
    expect(byName.add_memory!.annotations?.readOnlyHint).toBe(false);
    await client.close();
  });

  it("refuses a request without a valid key with 401, like REST", async () => {
    const init = {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    };
    const none = await svc.app.request("/mcp", init);
    expect(none.status).toBe(401);
    // A JSON-RPC error, with the spec's detail beside it, and the challenge RFC 9110 requires.
    expect(await none.json()).toMatchObject({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32000, message: expect.stringMatching(/key/i) },
      detail: { code: "unauthorized" },
    });
    expect(none.headers.get("www-authenticate")).toBe('Bearer realm="mnemo"');
    const bad = await svc.app.request("/mcp", {
      ...init,
      headers: { ...init.headers, "x-api-key": "mnemo_nope" },
    });
    expect(bad.status).toBe(401);
    expect(bad.headers.get("www-authenticate")).toMatch(/^Bearer /);
    expect((await bad.json()).jsonrpc).toBe("2.0");
    // REST's 401 carries the challenge too, in its own shape.
    const rest = await svc.app.request("/v1/memories?user_id=u");
    expect(rest.status).toBe(401);
    expect(rest.headers.get("www-authenticate")).toBe('Bearer realm="mnemo"');
    expect((await rest.json()).jsonrpc).toBeUndefined();
    await expect(
      httpClient({ url: URL_, app: svc.app, headers: { "x-api-key": "mnemo_bad" } }),
    ).rejects.toThrow();
  });

  it("refuses a body that is not UTF-8 with -32700, another charset 415, an oversized one 413, as JSON-RPC errors", async () => {
    const { key } = await svc.newOrg();
    const call = (body: Buffer, type = "application/json") =>
      svc.app.request("/mcp", {
        method: "POST",
        headers: { "x-api-key": key, "content-type": type, accept: "application/json, text/event-stream" },
        body: new Uint8Array(body),
      });
    const text =
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add_memory",' +
      '"arguments":{"content":"I like caf\xe9.","user_id":"ren\xe9","conv_id":"c1"}}}';
    const raw = await call(Buffer.from(text, "latin1"));
    expect(raw.status).toBe(400);
    expect(await raw.json()).toMatchObject({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32700, message: expect.stringMatching(/^Parse error: .*UTF-8/) },
      detail: { code: "invalid_json" },
    });
    const declared = await call(Buffer.from(text, "latin1"), "application/json; charset=iso-8859-1");
    expect(declared.status).toBe(415);
    expect(await declared.json()).toMatchObject({
      jsonrpc: "2.0",
      error: { code: -32000 },
      detail: { code: "unsupported_media_type" },
    });
    // Over MNEMO_MAX_BODY_BYTES: 413, as the SDK's own server transport answers it, in JSON-RPC.
    const big = await call(
      Buffer.from(
        JSON.stringify({
          jsonrpc: "2.0",
          id: 3,
          method: "tools/call",
          params: { name: "add_memory", arguments: { text: "x".repeat(2 * 1024 * 1024), user_id: "u" } },
        }),
      ),
    );
    expect(big.status).toBe(413);
    expect(await big.json()).toMatchObject({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32000, message: expect.stringMatching(/larger than 1048576 bytes/) },
      detail: { code: "payload_too_large" },
    });
  });

  it("answers GET and DELETE on /mcp with 405: there is no session or server stream", async () => {
    const { key } = await svc.newOrg();
    for (const method of ["GET", "DELETE"]) {
      const res = await svc.app.request("/mcp", {
        method,
        headers: { "x-api-key": key, accept: "text/event-stream" },
      });
      expect(res.status).toBe(405);
      expect(res.headers.get("allow")).toBe("POST");
      expect(await res.json()).toMatchObject({
        jsonrpc: "2.0",
        error: { code: -32000 },
        detail: { code: "method_not_allowed", message: expect.any(String) },
      });
    }
  });

  it("answers the transport's own refusals as JSON-RPC errors that also carry the spec's detail", async () => {
    const { key } = await svc.newOrg();
    const post = (headers: Record<string, string>, body: string) =>
      svc.app.request("/mcp", {
        method: "POST",
        headers: { "x-api-key": key, "content-type": "application/json", ...headers },
        body,
      });
    const list = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
    const notAcceptable = await post({ accept: "application/json" }, list);
    expect(notAcceptable.status).toBe(406);
    expect(await notAcceptable.json()).toMatchObject({
      jsonrpc: "2.0",
      error: { code: -32000, message: expect.stringMatching(/Not Acceptable/) },
      detail: { code: "not_acceptable", message: expect.stringMatching(/Not Acceptable/) },
    });
    const parseError = await post({ accept: "application/json, text/event-stream" }, "[1, 2");
    expect(parseError.status).toBe(400);
    expect(await parseError.json()).toMatchObject({
      jsonrpc: "2.0",
      error: { code: -32700 },
      detail: { code: "invalid_request", message: expect.stringMatching(/Parse error/) },
    });
  });

  it("refuses filters and tool arguments nested thousands of levels deep as bad input, not an internal error", async () => {
    const { key } = await svc.newOrg();
    // Written as text: JSON.stringify (the SDK client's, and the server's before the fix) overflows.
    const deep = `${"[".repeat(5000)}"x"${"]".repeat(5000)}`;
    const call = async (name: string, args: string) => {
      const res = await svc.app.request("/mcp", {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "x-api-key": key,
        },
        body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"${name}","arguments":${args}}}`,
      });
      expect(res.status).toBe(200);
      const { result } = (await res.json()) as { result: { isError: boolean; content: { text: string }[] } };
      expect(result.isError).toBe(true);
      return result.content[0]!.text;
    };
    for (const tool of ["search_memory", "list_memories"]) {
      const query = tool === "search_memory" ? `"query":"x",` : "";
      const text = await call(tool, `{${query}"user_id":"u","filters":{"user_id":"u","AND":${deep}}}`);
      expect(text, tool).toMatch(/invalid_filters/);
      expect(text, tool).not.toMatch(/server_error|Internal/);
    }
    const recalled = await call("recall_directives", `{"user_id":"u","tool":"bash","args":{"x":${deep}}}`);
    expect(recalled).toMatch(/nest at most 32 levels/);
    expect(recalled).not.toMatch(/trigger_failed|Internal/);
  });

  it("answers tools/call params that are not the protocol's shape with -32602 Invalid params, naming the field", async () => {
    const { key } = await svc.newOrg();
    const post = async (body: unknown) => {
      const res = await svc.app.request("/mcp", {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "x-api-key": key,
        },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(200);
      return (await res.json()) as any;
    };
    const init = await post({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } },
    });
    expect(init.result.serverInfo.name).toBe("mnemo");
    const rawDump = /invalid_type|"code"|"path"|\[\s*\{/;
    const cases: [unknown, string][] = [
      [null, "null"],
      [[1], "an array"],
      ["x", "a string"],
      [5, "a number"],
    ];
    for (const [args, kind] of cases) {
      for (const name of ["search_memory", "list_groups"]) {
        const out = await post({
          jsonrpc: "2.0",
          id: 7,
          method: "tools/call",
          params: { name, arguments: args },
        });
        const where = `${name} arguments ${JSON.stringify(args)}`;
        expect(out, where).toEqual({
          jsonrpc: "2.0",
          id: 7,
          error: { code: -32602, message: expect.stringContaining("`params.arguments` must be an object") },
        });
        expect(out.error.message, where).toContain(`not ${kind}`);
        expect(out.error.message, where).not.toMatch(rawDump);
      }
    }
    // The rest of the request's shape gets the same answer.
    const noName = await post({ jsonrpc: "2.0", id: 8, method: "tools/call", params: { arguments: {} } });
    expect(noName.error).toEqual({
      code: -32602,
      message: expect.stringContaining("`params.name` is missing"),
    });
    const badCursor = await post({ jsonrpc: "2.0", id: 9, method: "tools/list", params: { cursor: 5 } });
    expect(badCursor.error.code).toBe(-32602);
    expect(badCursor.error.message).toMatch(/`params.cursor` must be a string, not a number/);
    // A tool the server does not have is a protocol error too (it was an isError result).
    const unknown = await post({
      jsonrpc: "2.0",
      id: 12,
      method: "tools/call",
      params: { name: "nonexistent_tool", arguments: {} },
    });
    expect(unknown).toEqual({
      jsonrpc: "2.0",
      id: 12,
      error: { code: -32602, message: 'Unknown tool: "nonexistent_tool"; tools/list names the tools.' },
    });
    // Omitted arguments and bad argument values are still the tool's own answer (an isError result).
    const omitted = await post({
      jsonrpc: "2.0",
      id: 10,
      method: "tools/call",
      params: { name: "list_groups" },
    });
    expect(omitted.result.isError).toBeUndefined();
    const badValue = await post({
      jsonrpc: "2.0",
      id: 11,
      method: "tools/call",
      params: { name: "search_memory", arguments: { query: 5 } },
    });
    expect(badValue.result.isError).toBe(true);
    expect(badValue.result.content[0].text).toMatch(/-32602.*query/);
  });

  it("answers errors as isError results with the REST code and an actionable message", async () => {
    const { key } = await svc.newOrg();
    const { client } = await connect(key);
    const missing = "00000000-0000-4000-8000-000000000000";
    const notFound = await callErr(client, "get_memory", { memory_id: missing });
    expect(notFound).toMatch(/memory_not_found/);
    expect(notFound).toContain(missing);
    // A huge id is not echoed whole (an MCP argument has no URL's length limit).
    for (const [tool, arg] of [
      ["get_memory", "memory_id"],
      ["get_ingest_job", "job_id"],
      ["archive_group", "group_id"],
    ] as const) {
      const huge = await callErr(client, tool, { [arg]: "a".repeat(100_000) });
      expect(huge, tool).toMatch(/_not_found.*"a{64}\.\.\."/s);
      expect(huge.length, tool).toBeLessThan(300);
    }
    expect(
      await callErr(client, "get_ingest_job", { job_id: "job_0123456789abcdef0123456789abcdef" }),
    ).toMatch(/job_not_found.*job_0123456789abcdef0123456789abcdef/s);
    expect(
      await callErr(client, "archive_group", { group_id: "grp_0123456789abcdef0123456789abcdef" }),
    ).toMatch(/group_not_found.*grp_0123456789abcdef0123456789abcdef/s);
    // The code REST gives the same request (POST /v1/memories without a user).
    expect(await callErr(client, "add_memory", { text: "x" })).toMatch(/^Error missing_user_id: .*user_id/s);
    expect(await callErr(client, "tag_memory", { memory_id: missing })).toMatch(/empty_patch/);
    // Input that fails the tool's own schema.
    expect(await callErr(client, "list_memories", { limit: 0 })).toMatch(/limit/);
    await client.close();
  });

  it("answers a storage failure with the code and the request id only, never internals", async () => {
    const { orgId, key } = await svc.newOrg();
    const { client } = await connect(key);
    const [m] = await writeMemories(systemCtx(svc.deps, orgId, "seed"), [
      { type: "fact", text: "stuck", user_id: "u-fail" },
    ]);
    // Fault injection in the real database: deleting this one row fails.
    await svc.deps.db.query(`CREATE OR REPLACE FUNCTION mcp_refuse_delete() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'disk on fire (internal detail)'; END $$`);
    await svc.deps.db.query(
      `CREATE TRIGGER mcp_refuse_delete BEFORE DELETE ON memories FOR EACH ROW
       WHEN (OLD.id = '${m!.id}'::uuid) EXECUTE FUNCTION mcp_refuse_delete()`,
    );
    try {
      const out = await callErr(client, "delete_memory", { memory_id: m!.id });
      expect(out).toMatch(/delete_failed/);
      expect(out).toMatch(/request id [\w-]{8,}/);
      expect(out).not.toContain("disk on fire");
    } finally {
      await svc.deps.db.query("DROP TRIGGER mcp_refuse_delete ON memories");
      await client.close();
    }
  });

  it("runs the memory and group tools end to end, each answer matching its output schema", async () => {
    const { key } = await svc.newOrg();
    const { client, tools } = await connect(key);
    const user = "u-flow";

    const g = await callOk(client, tools, "create_group", { name: "team" });
    expect(g.structured).toMatchObject({ name: "team", status: "active", prompt: null });
    const g2 = await callOk(client, tools, "create_group", {
      name: "ops",
      prompt: "Deployment and on-call notes",
    });
    const renamed = await callOk(client, tools, "update_group", {
      group_id: g.structured.id,
      name: "team-a",
    });
    expect(renamed.structured.name).toBe("team-a");
    const groups = await callOk(client, tools, "list_groups", {});
    expect(groups.structured.data.map((x: { id: string }) => x.id).sort()).toEqual(
      [g.structured.id, g2.structured.id].sort(),
    );

    const added = await callOk(client, tools, "add_memory", {
      text: "I always use tabs for indentation in my projects.",
      user_id: user,
      group_ids: [g.structured.id],
    });
    expect(added.structured.status).toBe("succeeded");
    expect(added.text).toContain(added.structured.id);
    const created = added.structured.result.memories_created as { id: string }[];
    expect(created.length).toBeGreaterThan(0);
    const job = await callOk(client, tools, "get_ingest_job", { job_id: added.structured.id });
    expect(job.structured).toMatchObject({ id: added.structured.id, status: "succeeded" });

    const queued = await callOk(client, tools, "add_memory", {
      messages: [{ role: "user", content: "My cat is called Miso." }],
      user_id: user,
      wait: false,
    });
    expect(queued.structured.id).toMatch(/^job_/);
    expect(queued.text).toContain("get_ingest_job");

    const listed = await callOk(client, tools, "list_memories", { user_id: user });
    const listedIds = listed.structured.data.map((m: { id: string }) => m.id);
    for (const m of created) expect(listedIds).toContain(m.id);
    const memId = created[0]!.id;

    const one = await callOk(client, tools, "get_memory", { memory_id: memId });
    expect(one.structured.id).toBe(memId);
    expect(one.text).toContain(memId);

    const tagged = await callOk(client, tools, "tag_memory", {
      memory_id: memId,
      add_group_ids: [g2.structured.id],
    });
    expect(tagged.structured.group_ids).toContain(g2.structured.id);
    const revisions = await callOk(client, tools, "memory_revisions", { memory_id: memId });
    expect(revisions.structured.data.map((m: { id: string }) => m.id)).toContain(memId);

    const archived = await callOk(client, tools, "archive_group", { group_id: g2.structured.id });
    expect(archived.structured.status).toBe("archived");

    const deleted = await callOk(client, tools, "delete_memory", { memory_id: memId });
    expect(deleted.structured).toEqual({ id: memId, deleted: true });
    expect(await callErr(client, "delete_memory", { memory_id: memId })).toMatch(/memory_not_found/);
    await client.close();
  });

  it("cuts its text lines between characters, never through an emoji's surrogate pair", async () => {
    const { key } = await svc.newOrg();
    const { client, tools } = await connect(key);
    const emoji = "\u{1F600}".repeat(10);
    const lone = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
    // A line of an ingest's answer is cut at 200 characters, a group's prompt at 300.
    const added = await callOk(client, tools, "add_memory", {
      user_id: "u-cut",
      text: `I really like ${"b".repeat(176)}${emoji} in my kitchen every day.`,
    });
    expect(added.text).toMatch(/b{100}(?:\u{1F600})*… \(id /u);
    expect(added.text).not.toMatch(lone);
    const prompt = `${"x".repeat(296)}${emoji} and more`;
    const g = await callOk(client, tools, "create_group", { name: "emoji", prompt });
    expect(g.text).toContain(`${"x".repeat(296)}...`);
    expect(g.text).not.toMatch(lone);
    const listed = await callOk(client, tools, "list_groups", {});
    expect(listed.text).toContain(`${"x".repeat(296)}...`);
    expect(listed.text).not.toMatch(lone);
    await client.close();
  });

  it("runs search_memory and recall_directives end to end", async () => {
    const { orgId, key } = await svc.newOrg();
    const { client, tools } = await connect(key);
    const user = "u-search";
    const added = await callOk(client, tools, "add_memory", {
      text: "I always use tabs for indentation in Python projects.",
      user_id: user,
    });
    const memId = (added.structured.result.memories_created as { id: string }[])[0]!.id;

    const found = await callOk(client, tools, "search_memory", {
      query: "tabs indentation Python",
      user_id: user,
      mode: "retrieve",
    });
    expect(found.structured.mode).toBe("retrieve");
    expect(found.structured.data.map((m: { id: string }) => m.id)).toContain(memId);
    expect(found.text).toContain(memId);
    const composed = await callOk(client, tools, "search_memory", { query: "indentation", user_id: user });
    expect(composed.structured.mode).toBe("compose");
    expect(composed.text).toBe(composed.structured.context ?? "No memories matched.");

    // A directive with trigger entities, written through the core write.
    const ctx = systemCtx(svc.deps, orgId, "seed");
    const [directive] = await writeMemories(ctx, [
      {
        type: "lesson",
        text: "Run the migrations before starting the API server.",
        user_id: user,
        trigger_entities: ["migrate.ts"],
        outcome: "resolved",
      },
    ]);
    const recalled = await callOk(client, tools, "recall_directives", {
      tool: "Bash",
      args: { command: "tsx src/db/migrate.ts" },
      user_id: user,
      mode: "retrieve",
    });
    expect(recalled.structured.data.map((m: { id: string }) => m.id)).toEqual([directive!.id]);
    const silent = await callOk(client, tools, "recall_directives", {
      entities: ["unrelated_symbol"],
      user_id: user,
      mode: "retrieve",
    });
    expect(silent.structured.data).toEqual([]);

    // No scope given and none configured: the service's own rule, with what to do about it.
    const unscoped = await callErr(client, "search_memory", { query: "anything" });
    expect(unscoped).toMatch(/missing_scope/);
    expect(unscoped).toMatch(/MNEMO_DEFAULT_USER_ID|X-Mnemo-User-Id/);
    expect(await callErr(client, "recall_directives", { user_id: "u" })).toMatch(/missing_trigger/);
    await client.close();
  });

  it("takes the default scope from X-Mnemo-* headers", async () => {
    const { key } = await svc.newOrg();
    const alice = await connect(key, { "x-mnemo-user-id": "alice", "x-mnemo-agent-id": "agent-1" });
    const bob = await connect(key, { "x-mnemo-user-id": "bob" });
    const added = await callOk(alice.client, alice.tools, "add_memory", { text: "I live in Lisbon." });
    const id = (added.structured.result.memories_created as { id: string }[])[0]!.id;
    const mine = await callOk(alice.client, alice.tools, "get_memory", { memory_id: id });
    expect(mine.structured).toMatchObject({ user_id: "alice", agent_id: "agent-1" });
    const aliceList = await callOk(alice.client, alice.tools, "list_memories", {});
    expect(aliceList.structured.data.map((m: { id: string }) => m.id)).toContain(id);
    const bobList = await callOk(bob.client, bob.tools, "list_memories", {});
    expect(bobList.structured.data.map((m: { id: string }) => m.id)).not.toContain(id);
    await alice.client.close();
    await bob.client.close();
  });

  it("a key confined to a user acts as that user whatever X-Mnemo-User-Id says (the example config's `me`)", async () => {
    const { orgId } = await svc.newOrg();
    const alice = (await createApiKey(svc.deps.db, { orgId, userId: "alice", kind: "service" })).key;
    const { client, tools } = await connect(alice, {
      "x-mnemo-user-id": "me",
      "x-mnemo-agent-id": "agent-9",
    });
    const added = await callOk(client, tools, "add_memory", { text: "I live in Lisbon." });
    const id = (added.structured.result.memories_created as { id: string }[])[0]!.id;
    const mine = await callOk(client, tools, "get_memory", { memory_id: id });
    expect(mine.structured).toMatchObject({ user_id: "alice", agent_id: "agent-9" });
    const found = await callOk(client, tools, "search_memory", { query: "Lisbon", mode: "retrieve" });
    expect(found.structured.data.map((m: { id: string }) => m.id)).toContain(id);
    // Naming another user in the call itself is still that user's business: refused.
    expect(await callErr(client, "search_memory", { query: "Lisbon", user_id: "bob" })).toMatch(
      /user_mismatch/,
    );
    await client.close();
  });

  it("reads X-Mnemo-* headers as UTF-8, and refuses bytes that are not", async () => {
    const { key } = await svc.newOrg();
    // HTTP carries the header as bytes: "café" arrives as its UTF-8 bytes, one character each.
    const asBytes = (s: string) => Buffer.from(s, "utf8").toString("latin1");
    const cafe = await connect(key, { "x-mnemo-user-id": asBytes("café") });
    await callOk(cafe.client, cafe.tools, "add_memory", { text: "I collect stamps." });
    await cafe.client.close();
    // Stored as "café" (it was "cafÃ©"), so REST finds it under the same id.
    const listed = await svc.request("GET", `/v1/memories?type=fact&user_id=${encodeURIComponent("café")}`, {
      key,
    });
    expect(listed.body.data.map((m: { text: string }) => m.text)).toEqual([
      expect.stringContaining("collects stamps"),
    ]);
    // A Latin-1 "é" alone (0xE9) is not UTF-8: 400, naming the header.
    const bad = await svc.app.request("/mcp", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "x-api-key": key,
        "x-mnemo-user-id": "caf\u00e9",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(bad.status).toBe(400);
    const body = await bad.json();
    expect(body.error.code).toBe(-32600);
    expect(body.error.message).toMatch(/x-mnemo-user-id header is not UTF-8/i);
  });

  it("refuses JSON that is not JSON-RPC and empty batches with -32600, and answers a batch owing one reply with a batch", async () => {
    const { key } = await svc.newOrg();
    const post = (body: string) =>
      svc.app.request("/mcp", {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "x-api-key": key,
          "mcp-protocol-version": "2025-03-26",
        },
        body,
      });
    // The SDK's transport answered 202 with nothing, and -32700 Parse error (for JSON text).
    for (const [body, problem, id] of [
      ["[]", /empty batch/, null],
      ['{"foo":1}', /not a JSON-RPC 2\.0/, null],
      ['[{"jsonrpc":"2.0","id":1,"method":"ping"},{"foo":1}]', /not a JSON-RPC 2\.0/, null],
      ['{"jsonrpc":"2.0","id":5,"method":7}', /method/, 5],
      // A readable id is answered with, method or not; a malformed response's never (it is one of
      // the server's own requests' ids).
      ['{"jsonrpc":"2.0","id":5}', /not a JSON-RPC 2\.0/, 5],
      ['{"jsonrpc":"2.0","id":"r6","error":5}', /not a JSON-RPC 2\.0/, null],
      // Not the stdio transport's "one message per line": HTTP takes batches.
      ['[[{"jsonrpc":"2.0","id":1,"method":"ping"}]]', /a batch holds messages, not batches/, null],
    ] as const) {
      const r = await post(body);
      expect(r.status, body).toBe(400);
      const answer = await r.json();
      expect(answer.error.code, body).toBe(-32600);
      expect(answer.error.message, body).toMatch(problem);
      expect([body, answer.id]).toEqual([body, id]);
    }
    // Text that is not JSON stays -32700.
    const notJson = await post("{nope");
    expect(notJson.status).toBe(400);
    expect((await notJson.json()).error.code).toBe(-32700);
    // A batch of one is answered as a batch (it was the bare object).
    const one = await post('[{"jsonrpc":"2.0","id":1,"method":"ping"}]');
    expect(one.status).toBe(200);
    expect(await one.json()).toEqual([{ jsonrpc: "2.0", id: 1, result: {} }]);
    // So is a batch with one request among notifications (it was the bare object too).
    const mixed = await post(
      '[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":7,"method":"ping"}]',
    );
    expect(mixed.status).toBe(200);
    expect(await mixed.json()).toEqual([{ jsonrpc: "2.0", id: 7, result: {} }]);
    const single = await post('{"jsonrpc":"2.0","id":2,"method":"ping"}');
    expect(await single.json()).toEqual({ jsonrpc: "2.0", id: 2, result: {} });
  });

  it("answers a batch that cancels one of its requests with the other replies, or 202, never hanging", async () => {
    const { key } = await svc.newOrg();
    const post = (body: unknown) =>
      within(
        10_000,
        svc.app.request("/mcp", {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            "x-api-key": key,
            "x-mnemo-user-id": "u-cancel",
            "mcp-protocol-version": "2025-03-26",
          },
          body: JSON.stringify(body),
        }),
      );
    const cancel = (requestId: number) => ({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId, reason: "the user stopped" },
    });
    const ping = (id: number) => ({ jsonrpc: "2.0", id, method: "ping" });
    // Nothing left to answer: 202, no body (the POST hung, no reply ever came).
    const alone = await post([ping(1), cancel(1)]);
    expect(alone.status).toBe(202);
    expect(await alone.text()).toBe("");
    // The other requests are answered; the cancelled one gets no reply, whatever its place.
    const rest = await post([cancel(3), ping(3), ping(4), ping(5)]);
    expect(rest.status).toBe(200);
    expect(await rest.json()).toEqual([
      { jsonrpc: "2.0", id: 4, result: {} },
      { jsonrpc: "2.0", id: 5, result: {} },
    ]);
    // A tool call cancelled in its own batch is not run; one the batch does not cancel is.
    const add = (id: number, text: string) => ({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "add_memory", arguments: { text } },
    });
    const added = await post([add(7, "I sail on Sundays."), add(8, "I knit on Mondays."), cancel(7)]);
    expect(added.status).toBe(200);
    const [reply] = await added.json();
    expect([reply.id, reply.result.isError]).toEqual([8, undefined]);
    const listed = await svc.request("GET", "/v1/memories?user_id=u-cancel", { key });
    expect(JSON.stringify(listed.body.data)).toContain("knit");
    expect(JSON.stringify(listed.body.data)).not.toContain("sail");
    // A cancellation naming no request of its POST (each POST has its own server) is ignored.
    const other = await post([ping(9), cancel(42)]);
    expect(await other.json()).toEqual([{ jsonrpc: "2.0", id: 9, result: {} }]);
  });

  it("answers a request whose handler never returns with -32001 after the bound, beside the others' replies", async () => {
    // The SDK's own server with a tool that never finishes, behind the transport /mcp uses.
    const server = new McpServer({ name: "hang", version: "0.0.0" });
    server.registerTool("hang", { description: "never answers" }, () => new Promise<never>(() => {}));
    const transport = new BoundedJsonTransport();
    await server.connect(transport);
    const body = [
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "hang", arguments: {} } },
      { jsonrpc: "2.0", id: 2, method: "ping" },
    ];
    const request = new Request("http://mnemo.test/mcp", {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify(body),
    });
    const started = Date.now();
    const res = await within(10_000, transport.handleWithin(request, body, 300));
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(await res.json()).toEqual([
      { jsonrpc: "2.0", id: 1, error: { code: -32001, message: expect.stringMatching(/No answer within/) } },
      { jsonrpc: "2.0", id: 2, result: {} },
    ]);
    await server.close();
    // /mcp's bound is the longest a tool call is meant to hold, plus slack.
    expect(callBoundMs(svc.deps.config)).toBe(30_000 + 2 * 10_000 + 20_000);
  });

  it("keeps 20 concurrent clients' answers apart", async () => {
    const orgs: { key: string }[] = [];
    for (let i = 0; i < 20; i++) orgs.push(await svc.newOrg(`c${i}`));
    // The 20 sessions run at once, each writing and asking what only it knows.
    const answers = await Promise.all(
      orgs.map(async ({ key }, i) => {
        const { client, tools } = await connect(key, { "x-mnemo-user-id": `user-${i}` });
        const created = await callOk(client, tools, "create_group", { name: `group-${i}` });
        const listed = await callOk(client, tools, "list_groups", {});
        const missing = await callErr(client, "get_memory", { memory_id: ownId(i) });
        await client.close();
        return {
          created: created.structured.id,
          groups: listed.structured.data.map((g: { id: string; name: string }) => [g.id, g.name]),
          missing,
        };
      }),
    );
    answers.forEach(({ created, groups, missing }, i) => {
      expect(groups).toEqual([[created, `group-${i}`]]);
      expect(missing).toContain(ownId(i));
    });
  });

  it("list_memories with conv_id and filters reads the pinned default user, as with conv_id in the filters", async () => {
    const { key, orgId } = await svc.newOrg();
    const seed = (user: string, conv: string, project: string, text: string) => ({
      type: "fact" as const,
      text,
      user_id: user,
      conv_id: conv,
      metadata: { project },
    });
    await writeMemories(systemCtx(svc.deps, orgId, "seed"), [
      seed("carol", "convA", "apollo", "Carol books the launch venue."),
      seed("carol", "convB", "apollo", "Carol orders the banners."),
      seed("dave", "convA", "apollo", "Dave writes the press release."),
    ]);
    const { client, tools } = await connect(key, { "x-mnemo-user-id": "carol" });
    const texts = async (args: Record<string, unknown>) =>
      (await callOk(client, tools, "list_memories", args)).structured.data.map(
        (m: { text: string }) => m.text,
      );
    const inFilters = await texts({ filters: { "metadata.project": "apollo", conv_id: "convA" } });
    expect(inFilters).toEqual(["Carol books the launch venue."]);
    // It was missing_scope ("... or pin a default"), with the default pinned.
    expect(await texts({ conv_id: "convA", filters: { "metadata.project": "apollo" } })).toEqual(inFilters);
    // Filters naming a user only under NOT pin no scope: the default does not apply, and the hint
    // says why instead of asking for the default that is pinned.
    const unpinned = await callErr(client, "list_memories", { filters: { NOT: { user_id: "dave" } } });
    expect(unpinned).toMatch(/^Error missing_scope: .*The pinned default applies only when/);
    expect(unpinned).not.toMatch(/pin a default/);
    await client.close();
    // Without a default, pinning one is the advice.
    const bare = await connect(key);
    const refused = await callErr(bare.client, "list_memories", {
      filters: { "metadata.project": "apollo" },
    });
    expect(refused).toMatch(/^Error missing_scope: .*pin a default \(MNEMO_DEFAULT_USER_ID/);
    await bare.client.close();
  });

  it("keeps a __proto__ key in metadata and filters, as REST does", async () => {
    const { key } = await svc.newOrg();
    const { client, tools } = await connect(key);
    // Made by JSON.parse: in an object literal `__proto__` would set the prototype, not a key.
    const added = await callOk(client, tools, "add_memory", {
      user_id: "u-proto",
      text: "I collect old maps.",
      metadata: JSON.parse('{"__proto__":"x","kept":1}'),
    });
    expect(added.structured.status).toBe("succeeded");
    const list = async (filters: string) =>
      (await callOk(client, tools, "list_memories", { user_id: "u-proto", filters: JSON.parse(filters) }))
        .structured.data as any[];
    expect(await list('{"__proto__":"nope"}')).toEqual([]);
    const found = await list('{"__proto__":"x"}');
    expect(found.length).toBeGreaterThan(0);
    expect(Object.entries(found[0].metadata).sort()).toEqual([
      ["__proto__", "x"],
      ["kept", 1],
    ]);
    const updated = await callOk(client, tools, "update_memory", {
      memory_id: found[0].id,
      metadata: JSON.parse('{"__proto__":2}'),
    });
    expect(updated.structured.metadata).toEqual(JSON.parse('{"__proto__":2,"kept":1}'));
    expect(Object.hasOwn(updated.structured.metadata, "__proto__")).toBe(true);
    await client.close();
  });

  it("add_memory takes metadata; search_memory and list_memories take filters; update_memory supersedes a fact", async () => {
    const { key, orgId } = await svc.newOrg();
    const { client, tools } = await connect(key);
    const added = (
      await callOk(client, tools, "add_memory", {
        user_id: "u-mcp-f",
        text: "I prefer window seats on long flights.",
        metadata: { source: "mcp" },
      })
    ).structured;
    expect(added.status).toBe("succeeded");
    await writeMemories(systemCtx(svc.deps, orgId, "seed"), [
      {
        type: "fact",
        text: "I prefer aisle seats on trains.",
        user_id: "u-mcp-f",
        metadata: { source: "other" },
      },
    ]);
    const found = (
      await callOk(client, tools, "search_memory", {
        query: "seats",
        user_id: "u-mcp-f",
        mode: "retrieve",
        filters: { "metadata.source": "mcp" },
      })
    ).structured;
    expect(found.data.length).toBeGreaterThan(0);
    for (const m of found.data) expect(m.metadata.source).toBe("mcp");
    const listed = (
      await callOk(client, tools, "list_memories", {
        user_id: "u-mcp-f",
        filters: { "metadata.source": "other" },
      })
    ).structured;
    expect(listed.data.map((m: any) => m.text)).toEqual(["I prefer aisle seats on trains."]);
    // Filtered pages are newest first only: the other order is refused, not silently ignored.
    expect(
      await callErr(client, "list_memories", {
        user_id: "u-mcp-f",
        filters: { "metadata.source": "other" },
        order: "created_at_asc",
      }),
    ).toMatch(/invalid_order/);
    const fixed = (
      await callOk(client, tools, "update_memory", {
        memory_id: listed.data[0].id,
        text: "I prefer aisle seats on trains and planes.",
      })
    ).structured;
    expect(fixed.id).not.toBe(listed.data[0].id);
    expect(fixed.details.supersedes).toBe(listed.data[0].id);
    // Refusals speak this surface's words: no REST body fields or routes.
    const empty = await callErr(client, "update_memory", { memory_id: fixed.id });
    expect(empty).toMatch(/empty_patch.*text or metadata.*tag_memory/s);
    expect(empty).not.toMatch(/add_group_ids/);
    const stale = await callErr(client, "update_memory", {
      memory_id: listed.data[0].id,
      text: "Window seats.",
    });
    expect(stale).toMatch(/already superseded/);
    expect(stale).not.toMatch(/\/revisions/);
    expect(
      await callErr(client, "search_memory", { query: "x", filters: { user_id: { $regex: "u" } } }),
    ).toMatch(/invalid_filters.*filters\.user_id\.\$regex/s);
    // Filters the tool wraps in conditions of its own (the call's user, conversation, kinds) still
    // name the place in the caller's filters, as REST does.
    const wrapped: [string, Record<string, unknown>, string][] = [
      ["search_memory", { query: "x", user_id: "u-mcp-f", filters: { $bogus: 1 } }, "filters.$bogus:"],
      [
        "search_memory",
        { query: "x", user_id: "u-mcp-f", include: ["fact"], filters: { created_at: { $gt: "yesterday" } } },
        "filters.created_at.$gt:",
      ],
      [
        "list_memories",
        { user_id: "u-mcp-f", conv_id: "c", filters: { OR: [{ app_id: "a" }, { $bogus: 1 }] } },
        "filters.OR[1].$bogus:",
      ],
    ];
    for (const [tool, args, path] of wrapped) {
      const refused = await callErr(client, tool, args);
      expect(refused).toContain(`Error invalid_filters: ${path}`);
    }
    await client.close();
  });

  it("marks a superseded fact in list, get and revisions text, and get_memory shows a memory in full", async () => {
    const { key, orgId } = await svc.newOrg();
    const { client, tools } = await connect(key);
    const user = "u-render";
    const long = `Project Falcon notes: ${"the rollout runs region by region. ".repeat(12)}Final line: the secret handshake is wave twice.`;
    const [old, note, lesson] = await writeMemories(systemCtx(svc.deps, orgId, "seed"), [
      { type: "fact", text: "The user lives in Paris.", user_id: user },
      { type: "fact", text: long, user_id: user },
      {
        type: "procedure",
        text: "Deploy the API service.",
        user_id: user,
        trigger_entities: ["deploy.sh", "api"],
        outcome: "resolved",
        details: { steps: ["Run the migrations.", "Run deploy.sh api."], observation_count: 3 },
      },
    ]);
    const fixed = (
      await callOk(client, tools, "update_memory", {
        memory_id: old!.id,
        text: "The user lives in Berlin now.",
      })
    ).structured;

    const listed = (await callOk(client, tools, "list_memories", { user_id: user })).text;
    const line = (id: string) => listed.split("\n").find((l) => l.includes(id));
    expect(line(old!.id)).toMatch(/^- \[fact, superseded\] The user lives in Paris\./);
    expect(line(fixed.id)).toMatch(/^- \[fact\] The user lives in Berlin now\./);

    const stale = (await callOk(client, tools, "get_memory", { memory_id: old!.id })).text;
    expect(stale).toMatch(/^\[fact, superseded\] id \S+ \(memory_revisions names the current fact\)/);
    expect(stale).toMatch(/status: superseded/);
    const current = (await callOk(client, tools, "get_memory", { memory_id: fixed.id })).text;
    expect(current).toMatch(/^\[fact\] id /);
    expect(current).toContain(`supersedes: ${old!.id}`);

    const revisions = (await callOk(client, tools, "memory_revisions", { memory_id: old!.id })).text;
    expect(revisions.split("\n")).toEqual([
      `- [fact, superseded] The user lives in Paris. (id ${old!.id}, superseded by ${fixed.id})`,
      `- [fact] The user lives in Berlin now. (id ${fixed.id}, current)`,
    ]);

    // The list line cuts a long memory; get_memory gives all of it.
    expect(line(note!.id)).not.toContain("wave twice");
    expect((await callOk(client, tools, "get_memory", { memory_id: note!.id })).text).toContain(long);
    const proc = (await callOk(client, tools, "get_memory", { memory_id: lesson!.id })).text;
    expect(proc).toContain("trigger_entities: deploy.sh, api");
    expect(proc).toContain("source_outcome: resolved");
    expect(proc).toContain("observation_count: 3");
    expect(proc).toContain("steps:\n    1. Run the migrations.\n    2. Run deploy.sh api.");
    await client.close();
  });

  it("search_memory with filters composes only when they pin user_id and conv_id, else returns the ranked list", async () => {
    const { key, orgId } = await svc.newOrg();
    const { client, tools } = await connect(key);
    await writeMemories(systemCtx(svc.deps, orgId, "seed"), [
      { type: "fact", text: "My brother Tom plays the cello.", user_id: "u-pin", conv_id: "c-pin" },
    ]);
    const search = async (args: Record<string, unknown>) =>
      (await callOk(client, tools, "search_memory", { query: "brother", ...args })).structured;
    // Named, but not pinned to one value: the ranked list (was missing_conv_id / missing_user_id).
    for (const args of [
      { user_id: "u-pin", filters: { conv_id: { $ne: "zz" } } },
      { user_id: "u-pin", filters: { OR: [{ conv_id: "c-pin" }, { "metadata.topic": "fam" }] } },
      { filters: { user_id: { $in: ["u-pin", "bob"] }, conv_id: "c-pin" } },
    ]) {
      const out = await search(args);
      expect([args, out.mode, out.data.length]).toEqual([args, "retrieve", 1]);
    }
    // Pinned by the call's user_id and an equality on conv_id: composed.
    const composed = await search({ user_id: "u-pin", filters: { conv_id: "c-pin" } });
    expect(composed.mode).toBe("compose");
    expect(composed.context).toContain("cello");
    await client.close();
  });

  it("add_memory carries each message's name and dia_id, and takes text when messages is empty", async () => {
    const { key } = await svc.newOrg();
    const { client, tools } = await connect(key);
    const named = await callOk(client, tools, "add_memory", {
      messages: [
        { role: "user", name: "Ana", content: "I play the cello in a quartet on Sundays.", dia_id: "D1:1" },
      ],
      user_id: "u-name",
    });
    const fact = (named.structured.result.memories_created as { id: string; type: string }[]).find(
      (m) => m.type === "fact",
    )!;
    const row = (await callOk(client, tools, "get_memory", { memory_id: fact.id })).structured;
    expect(row.text).toContain("Ana plays the cello");
    expect(row.details.source_event_ids).toEqual(["D1:1"]);
    const fromText = await callOk(client, tools, "add_memory", {
      messages: [],
      text: "I keep bees on the roof of my building.",
      user_id: "u-name",
    });
    expect(fromText.structured.status).toBe("succeeded");
    await client.close();
  });

  it("takes null for every optional argument as left out, as REST does", async () => {
    const { key } = await svc.newOrg();
    const { client, tools } = await connect(key);
    const added = await callOk(client, tools, "add_memory", {
      messages: [{ role: "user", content: "I keep bees on the roof.", dia_id: null, name: null }],
      user_id: "u-null",
      agent_id: null,
      app_id: null,
      namespace: null,
      outcome: null,
      timestamp_format: null,
      conv_id: null,
    });
    expect(added.structured.status).toBe("succeeded");
    const found = await callOk(client, tools, "search_memory", {
      query: "bees",
      user_id: "u-null",
      agent_id: null,
      app_id: null,
    });
    expect(JSON.stringify(found.structured)).toContain("bees");
    await callOk(client, tools, "list_memories", { user_id: "u-null", cursor: null });
    await callOk(client, tools, "recall_directives", {
      user_id: "u-null",
      entities: ["npm"],
      namespace: null,
      task: null,
    });
    const group = (await callOk(client, tools, "create_group", { name: "All", prompt: null })).structured;
    expect(group.prompt).toBeNull();
    const renamed = (
      await callOk(client, tools, "update_group", { group_id: group.id, name: null, prompt: "p" })
    ).structured;
    expect([renamed.name, renamed.prompt]).toEqual(["All", "p"]);
    // A field with a default takes null too, and the default applies (each was -32602).
    const waited = await callOk(client, tools, "add_memory", {
      text: "I keep goats as well.",
      user_id: "u-null",
      wait: null,
    });
    expect(waited.structured.status).toBe("succeeded");
    const composed = await callOk(client, tools, "search_memory", {
      query: "bees",
      user_id: "u-null",
      mode: null,
    });
    expect(composed.structured.mode).toBe("compose");
    const recalled = await callOk(client, tools, "recall_directives", {
      user_id: "u-null",
      entities: ["npm"],
      mode: null,
    });
    expect(recalled.structured.mode).toBe("compose");
    const page = await callOk(client, tools, "list_memories", { user_id: "u-null", limit: null });
    expect(page.structured.data.length).toBeGreaterThan(1);
    await callOk(client, tools, "archive_group", { group_id: group.id });
    const groups = await callOk(client, tools, "list_groups", { include_archived: null });
    expect(groups.structured.data).toEqual([]);
    // Every optional field says so in the schema a strict client reads.
    for (const t of tools) {
      const schema = t.inputSchema as { properties: Record<string, any>; required?: string[] };
      for (const [field, property] of Object.entries(schema.properties)) {
        if (schema.required?.includes(field)) continue;
        expect(JSON.stringify(property), `${t.name}.${field}`).toMatch(/"type":"null"|"null"\]/);
      }
    }
    const add = tools.find((t) => t.name === "add_memory")!.inputSchema as {
      properties: Record<string, any>;
    };
    expect(add.properties.wait.default).toBe(true);
    await client.close();
  });

  it("refuses an argument a tool does not know, naming it, and lists every input schema as closed", async () => {
    const { key } = await svc.newOrg();
    const { client, tools } = await connect(key);
    for (const t of tools) expect(t.inputSchema.additionalProperties, t.name).toBe(false);
    await callOk(client, tools, "add_memory", { text: "I like kiwis.", user_id: "u-strict-a" });
    await callOk(client, tools, "add_memory", { text: "I like figs.", user_id: "u-strict-b" });
    // A misspelt axis with an org-wide key and no default: stripped, it listed every user's rows.
    const listed = await callErr(client, "list_memories", { userId: "u-strict-a", limit: 100 });
    expect(listed).toMatch(/Unrecognized key: "userId"/);
    expect(listed).not.toMatch(/kiwis|figs/);
    // A misspelt axis on a write does not fall back to another user (or the default).
    const pinned = await connect(key, { "x-mnemo-user-id": "u-strict-b" });
    expect(
      await callErr(pinned.client, "add_memory", { text: "I like limes.", usr_id: "u-strict-a" }),
    ).toMatch(/Unrecognized key: "usr_id"/);
    expect(await callErr(pinned.client, "search_memory", { query: "kiwis", groupIds: ["grp_x"] })).toMatch(
      /Unrecognized key: "groupIds"/,
    );
    const b = await callOk(client, tools, "list_memories", { user_id: "u-strict-b" });
    expect(JSON.stringify(b.structured)).not.toContain("limes");
    // Every key a tool lists is still taken, null included.
    const a = await callOk(client, tools, "list_memories", { user_id: "u-strict-a", cursor: null });
    expect(JSON.stringify(a.structured)).toContain("kiwis");
    await pinned.client.close();
    await client.close();
  });

  it("search_memory with filters searches only the kinds include names", async () => {
    const { key, orgId } = await svc.newOrg();
    const { client, tools } = await connect(key);
    await writeMemories(systemCtx(svc.deps, orgId, "seed"), [
      { type: "fact", text: "My brother Tom plays the cello.", user_id: "u-inc", metadata: { topic: "fam" } },
      {
        type: "episode",
        text: "A talk about my brother and his cello.",
        user_id: "u-inc",
        metadata: { topic: "fam" },
      },
    ]);
    const out = (
      await callOk(client, tools, "search_memory", {
        query: "brother cello",
        user_id: "u-inc",
        include: ["episode"],
        mode: "retrieve",
        filters: { "metadata.topic": "fam" },
      })
    ).structured;
    expect(out.data.map((m: any) => m.type)).toEqual(["episode"]);
    await client.close();
  });

  it("add_memory's text names the first memories of a big ingest, cut short; the structured result has all", async () => {
    const { key } = await svc.newOrg();
    const { client, tools } = await connect(key);
    const messages = Array.from({ length: 60 }, (_, i) => ({
      role: "user",
      content: `My colleague number ${i} works in Lisbon on the climbing project and ${"likes long walks ".repeat(20)}.`,
    }));
    const added = await callOk(client, tools, "add_memory", { messages, user_id: "u-big" });
    const created = added.structured.result.memories_created as unknown[];
    expect(created.length).toBeGreaterThan(30);
    const lines = added.text.split("\n").filter((l: string) => l.startsWith("- created"));
    expect(lines).toHaveLength(25);
    expect(Math.max(...lines.map((l: string) => l.length))).toBeLessThan(300);
    expect(added.text).toMatch(new RegExp(`\\.\\.\\. and ${created.length - 25} more`));
    await client.close();
  });

  it("search_memory finds lessons by what they say when include names them, as REST search does", async () => {
    const { key, orgId } = await svc.newOrg();
    const { client, tools } = await connect(key);
    await writeMemories(systemCtx(svc.deps, orgId, "seed"), [
      { type: "fact", text: "The deploy runs on Fridays.", user_id: "u-les" },
      {
        type: "lesson",
        text: "Always run the smoke tests before the deploy.",
        user_id: "u-les",
        trigger_entities: ["smoke_tests.sh"],
      },
    ]);
    const args = { query: "deploy smoke tests", user_id: "u-les", mode: "retrieve" };
    const plain = (await callOk(client, tools, "search_memory", args)).structured;
    expect(plain.data.map((m: any) => m.type)).not.toContain("lesson");
    const asked = (await callOk(client, tools, "search_memory", { ...args, include: ["fact", "lesson"] }))
      .structured;
    expect(asked.data[0]).toMatchObject({
      type: "lesson",
      text: "Always run the smoke tests before the deploy.",
    });
    expect(asked.data.map((m: any) => m.type)).toContain("fact");
    await client.close();
  });
});

const ownId = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`;

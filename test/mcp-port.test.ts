import type { AddressInfo } from "node:net";
import { type ServerType, serve } from "@hono/node-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toolError } from "../mcp/errors.js";
import { inProcessService } from "../mcp/in-process.js";
import type { MemoryService } from "../mcp/port.js";
import { remoteService } from "../mcp/remote.js";
import { systemCtx } from "../src/context.js";
import { CoreError } from "../src/errors.js";
import { writeMemories } from "../src/memories/write.js";
import { TEST_EMBEDDING_DIM } from "./helpers/constants.js";
import { startTestService, type TestService } from "./helpers/harness.js";
import { startStubOpenAI } from "./helpers/stub-openai.js";

let svc: TestService;
let http: ServerType;
let baseUrl: string;

beforeAll(async () => {
  svc = await startTestService();
  http = await new Promise<ServerType>((resolve) => {
    const s = serve({ fetch: svc.app.fetch, port: 0, hostname: "127.0.0.1" }, () => resolve(s));
  });
  baseUrl = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => http?.close(() => resolve()));
  await svc?.stop();
});

/** Both adapters of the tools' port for one fresh organisation. */
async function adapters(): Promise<{ orgId: string; ports: [string, MemoryService][] }> {
  const { orgId, key } = await svc.newOrg();
  const ctx = systemCtx(svc.deps, orgId, "port-test-request");
  return {
    orgId,
    ports: [
      ["in-process", inProcessService(async () => ctx)],
      ["remote", remoteService({ baseUrl, headers: { "x-api-key": key } })],
    ],
  };
}

async function failure(p: Promise<unknown>): Promise<CoreError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(CoreError);
  return err as CoreError;
}

describe("the MCP tools' port: in-process and remote answer alike", () => {
  it("answers not-found, field validation and legacy search shapes the same way", async () => {
    const { orgId, ports } = await adapters();
    const [seeded] = await writeMemories(systemCtx(svc.deps, orgId, "seed"), [
      { type: "fact", text: "The deploy window is Tuesday morning.", user_id: "u-port" },
    ]);
    for (const [name, port] of ports) {
      const missing = await failure(port.getMemory("00000000-0000-4000-8000-000000000000"));
      expect([name, missing.code]).toEqual([name, "memory_not_found"]);

      const nul = await failure(port.search({ query: "deploy", user_id: "u\u0000x" }));
      expect([name, nul.code]).toEqual([name, "invalid_request"]);
      expect(nul.message).toMatch(/body\.user_id: NUL/);

      const group = await failure(port.createGroup({ name: "a\u0000b" }));
      expect([name, group.code, group.message]).toEqual([
        name,
        "invalid_request",
        expect.stringMatching(/body\.name/),
      ]);

      // A field error with a spec code keeps its code and field through both adapters.
      const empty = await failure(port.search({ query: "", user_id: "u-port" }));
      expect([name, empty.code, empty.field]).toEqual([name, "empty_query", "query"]);
      const limit = await failure(port.listMemories({ user_id: "u-port", limit: 0 }));
      expect([name, limit.code, limit.field]).toEqual([name, "invalid_limit", "limit"]);

      // A legacy body: the user id under `filters`, `rows` for retrieve.
      const legacy = await port.search({
        query: "deploy window",
        filters: { user_id: "u-port" },
        mode: "rows",
      } as never);
      expect([name, legacy.mode]).toEqual([name, "retrieve"]);
      expect(legacy.data.map((m) => m.id)).toContain(seeded!.id);

      const listed = await port.listMemories({ user_id: "u-port", limit: 5 });
      expect(listed.data.map((m) => m.id)).toEqual([seeded!.id]);
    }
  });

  it("turns a server-side failure into its code and a message naming only the request id", async () => {
    const { orgId, ports } = await adapters();
    const [m] = await writeMemories(systemCtx(svc.deps, orgId, "seed"), [
      { type: "fact", text: "stuck row", user_id: "u-port-fail" },
    ]);
    await svc.deps.db.query(`CREATE OR REPLACE FUNCTION port_refuse_delete() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'disk on fire (internal detail)'; END $$`);
    await svc.deps.db.query(
      `CREATE TRIGGER port_refuse_delete BEFORE DELETE ON memories FOR EACH ROW
       WHEN (OLD.id = '${m!.id}'::uuid) EXECUTE FUNCTION port_refuse_delete()`,
    );
    try {
      for (const [name, port] of ports) {
        const err = await failure(port.deleteMemory(m!.id));
        expect([name, err.code]).toEqual([name, "delete_failed"]);
        expect(err.message).not.toContain("disk on fire");
        const requestId = /request id (\S+) to the operator/.exec(err.message)?.[1];
        expect(requestId, name).toEqual(
          name === "remote" ? expect.stringMatching(/^mcp-/) : "port-test-request",
        );
      }
    } finally {
      await svc.deps.db.query("DROP TRIGGER port_refuse_delete ON memories");
    }
  });

  it("filtered search and list, and update_memory, answer alike (filter errors keep their path)", async () => {
    const { orgId, ports } = await adapters();
    const [a, b] = await writeMemories(systemCtx(svc.deps, orgId, "seed"), [
      { type: "fact", text: "Deploys happen on Tuesday.", user_id: "u-f", metadata: { team: "ops" } },
      { type: "fact", text: "Deploys need a review.", user_id: "u-f", metadata: { team: "dev" } },
    ]);
    for (const [name, port] of ports) {
      const found = await port.searchFiltered({
        query: "deploys",
        filters: { user_id: "u-f", "metadata.team": "ops" },
      });
      expect([name, found.results.map((m) => m.id)]).toEqual([name, [a!.id]]);
      const listed = await port.listFiltered({ filters: { user_id: "u-f", team: { $in: ["dev"] } } });
      expect([name, listed.count, listed.results.map((m) => m.id)]).toEqual([name, 1, [b!.id]]);
      const bad = await failure(
        port.listFiltered({ filters: { OR: [{ user_id: "u-f" }, { created_at: { $gte: "later" } }] } }),
      );
      expect([name, bad.code, bad.field]).toEqual([name, "invalid_filters", "filters.OR[1].created_at.$gte"]);
      const tagged = await port.updateMemory(b!.id, { metadata: { [name]: true } });
      expect(tagged.metadata).toMatchObject({ team: "dev", [name]: true });
      const reserved = await failure(port.updateMemory(b!.id, { metadata: { kb_type: "x" } }));
      expect([name, reserved.code]).toEqual([name, "reserved_field"]);
    }
  });

  it("answers an id that is a dot segment as not found, never as a path to another route", async () => {
    const { ports } = await adapters();
    for (const [name, port] of ports) {
      // `.` and `..` would resolve away in a URL (GET /v1/memories/.. is the list); their
      // percent-encoded forms are escaped as ids and reach the id's own route.
      for (const id of [".", "..", "%2e", "%2E%2e", ".%2e"]) {
        const calls: [string, () => Promise<unknown>][] = [
          ["memory_not_found", () => port.getMemory(id)],
          ["memory_not_found", () => port.deleteMemory(id)],
          ["memory_not_found", () => port.memoryRevisions(id)],
          [
            "memory_not_found",
            () => port.tagMemory(id, { remove_group_ids: ["grp_0123456789abcdef0123456789abcdef"] }),
          ],
          ["memory_not_found", () => port.updateMemory(id, { metadata: { x: 1 } })],
          ["job_not_found", () => port.getIngestJob(id)],
          ["group_not_found", () => port.updateGroup(id, { name: "renamed" })],
          ["group_not_found", () => port.archiveGroup(id)],
        ];
        for (const [code, call] of calls) {
          // Each call starts only when awaited: a rejection waiting its turn is an unhandled one.
          const err = await failure(call());
          expect([name, id, err.code]).toEqual([name, id, code]);
          expect(err.message).toContain(id);
        }
      }
      // An id longer than any the service makes is as unknown as any other, not a URL too long.
      const long = "x".repeat(100_000);
      expect([name, (await failure(port.getMemory(long))).code]).toEqual([name, "memory_not_found"]);
      expect([name, (await failure(port.getIngestJob(long))).code]).toEqual([name, "job_not_found"]);
    }
  });

  it("answers ids with a lone surrogate or NUL, and such query values, as in-process does", async () => {
    const { ports } = await adapters();
    const group = "grp_0123456789abcdef0123456789abcdef";
    const calls: [string, (port: MemoryService) => Promise<unknown>][] = [
      ["memory_not_found", (p) => p.getMemory("\ud800")],
      ["memory_not_found", (p) => p.getMemory("a\u0000b")],
      ["memory_not_found", (p) => p.deleteMemory("a\u0000b")],
      ["memory_not_found", (p) => p.memoryRevisions("x\udfffy")],
      ["job_not_found", (p) => p.getIngestJob("\ud800")],
      ["group_not_found", (p) => p.updateGroup("\ud800", { name: "renamed" })],
      ["group_not_found", (p) => p.archiveGroup(`${group}\u0000`)],
      ["invalid_request", (p) => p.listMemories({ user_id: "\ud800" })],
      ["invalid_request", (p) => p.listMemories({ user_id: "u", agent_id: "a\udc00" })],
      ["invalid_request", (p) => p.listMemories({ group_id: "g\u0000" })],
      ["invalid_request", (p) => p.listMemories({ user_id: "u", cursor: "\ud800" })],
    ];
    for (const [code, call] of calls) {
      // The same code and message from both (remote: server_error, a U+FFFD id read as another
      // user's with no rows, cursor_mismatch, or "NUL characters (%00) are not allowed in the URL").
      const [local, remote] = await Promise.all(ports.map(([, port]) => failure(call(port))));
      if (!local || !remote) throw new Error("two ports");
      expect([call.toString(), remote.code, remote.message]).toEqual([call.toString(), code, local.message]);
      expect(local.code).toBe(code);
    }
  });

  it("an ingest with wait gets the server's answer after its window; one given up on is not called unreachable", async () => {
    // A slow model: extraction outlasts the server's 3 s window, which outlasts 1 s, the time-out
    // of other calls (the probe's: MNEMO_WAIT_SECONDS=120 against the fixed 60 s).
    const stub = await startStubOpenAI({ dim: TEST_EMBEDDING_DIM });
    stub.enqueue("extract", { delayMs: 8000 }, { delayMs: 8000 });
    const slow = await startTestService({
      env: {
        MNEMO_LLM_BASE_URL: stub.url,
        OPENAI_API_KEY: "sk-test",
        MNEMO_WAIT_SECONDS: "3",
        MNEMO_SHUTDOWN_TIMEOUT_MS: "1000",
      },
    });
    const served = await new Promise<ServerType>((resolve) => {
      const s = serve({ fetch: slow.app.fetch, port: 0, hostname: "127.0.0.1" }, () => resolve(s));
    });
    const url = `http://127.0.0.1:${(served.address() as AddressInfo).port}`;
    try {
      const { key } = await slow.newOrg();
      const body = (conv: string) => ({
        user_id: "u-wait",
        conv_id: conv,
        messages: [{ role: "user", content: "I moved to Berlin in March." }],
      });
      const started = Date.now();
      const remote = remoteService({ baseUrl: url, headers: { "x-api-key": key }, timeoutMs: 1000 });
      // It was "Could not reach the Mnemo service: The operation was aborted due to timeout" at 1 s.
      const job = await remote.ingest(body("c-wait"), { wait: true });
      expect(Date.now() - started).toBeGreaterThanOrEqual(2900);
      expect(job.status).not.toMatch(/succeeded|failed/);
      // A client that gives up first says the ingest may have been accepted, and it was.
      const impatient = remoteService({
        baseUrl: url,
        headers: { "x-api-key": key },
        timeoutMs: 200,
        waitTimeoutMs: 1000,
      });
      const err = await failure(impatient.ingest(body("c-wait-2"), { wait: true }));
      const text = (toolError(err).content[0] as { text: string }).text;
      expect(text).toMatch(
        /^Error service_unavailable: The Mnemo service did not answer within 1 s; the ingest may have been accepted/,
      );
      expect(text).not.toMatch(/Could not reach|MNEMO_URL/);
      const jobs = await slow.request("GET", "/v1/memories/jobs", { key });
      expect(jobs.body.data).toHaveLength(2);
    } finally {
      await new Promise<void>((resolve) => served.close(() => resolve()));
      await slow.stop();
      await stub.close();
    }
  }, 60_000);

  it("a service it cannot reach is named as such, not as the database", async () => {
    // A port that was just free: nothing listens there.
    const probe = serve({ fetch: () => new Response(), port: 0, hostname: "127.0.0.1" });
    await new Promise((r) => probe.once("listening", r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const remote = remoteService({ baseUrl: `http://127.0.0.1:${port}`, headers: {} });
    const err = await remote.listGroups({ includeArchived: false }).then(
      () => null,
      (e: unknown) => e,
    );
    const text = (toolError(err).content[0] as { text: string }).text;
    expect(text).toMatch(/^Error service_unavailable: Could not reach the Mnemo service/);
    expect(text).toContain("MNEMO_URL");
  });
});

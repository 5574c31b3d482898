import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, type TestService } from "./helpers/harness.js";
import { httpClient } from "./helpers/mcp-client.js";

/**
 * A database out of a resource (PostgreSQL's class 53: a full disk, 53100; out of memory, 53200;
 * too many connections, 53300) is the database's trouble, not the request's: 503
 * `service_unavailable` with Retry-After, as when the database is out of reach, never a 500. The
 * errors come from the real database: a trigger raises them for groups of certain names.
 */
let svc: TestService;
let key: string;

beforeAll(async () => {
  svc = await startTestService({ workers: false });
  ({ key } = await svc.newOrg("resources"));
  await svc.deps.db.query(`
    CREATE FUNCTION test_out_of_resources() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.name = 'disk-full' THEN
        RAISE EXCEPTION 'could not extend file "base/5/16384": No space left on device' USING ERRCODE = '53100';
      ELSIF NEW.name = 'no-memory' THEN
        RAISE EXCEPTION 'out of memory' USING ERRCODE = '53200';
      END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER test_out_of_resources BEFORE INSERT ON groups
      FOR EACH ROW EXECUTE FUNCTION test_out_of_resources();`);
});
afterAll(async () => {
  await svc?.stop();
});

describe("a database out of a resource", () => {
  it("is 503 service_unavailable with Retry-After over REST, and the database serves the next request", async () => {
    for (const name of ["disk-full", "no-memory"]) {
      const r = await svc.request("POST", "/v1/groups", { key, body: { name, prompt: "notes" } });
      expect(r.status, r.text).toBe(503);
      expect(r.headers.get("retry-after")).toBe("1");
      expect(r.body).toMatchObject({
        detail: { code: "service_unavailable" },
        error: { type: "api_error", code: "service_unavailable" },
      });
      // Nothing of the database's own message reaches the client.
      expect(r.text).not.toMatch(/No space left|out of memory|base\/5/);
    }
    const ok = await svc.request("POST", "/v1/groups", { key, body: { name: "fine", prompt: "notes" } });
    expect(ok.status, ok.text).toBe(201);
  });

  it("is a service_unavailable tool error over MCP", async () => {
    const client = await httpClient({
      url: "http://mnemo.test/mcp",
      app: svc.app,
      headers: { "x-api-key": key },
    });
    try {
      const res = (await client.callTool({
        name: "create_group",
        arguments: { name: "disk-full", prompt: "notes" },
      })) as CallToolResult;
      expect(res.isError).toBe(true);
      const text = res.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
      expect(text).toMatch(/^Error service_unavailable:/);
      expect(text).not.toMatch(/No space left/);
    } finally {
      await client.close();
    }
  });
});

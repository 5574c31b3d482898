import { rmSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "./helpers/harness.js";
import { callErr, callOk, httpClient, TOOL_NAMES } from "./helpers/mcp-client.js";
import {
  childEnv,
  migratedDataDir,
  ROOT,
  type ServerProcess,
  startServerProcess,
  TSX,
} from "./helpers/process.js";
import { createTestDatabase, onServer } from "./helpers/test-db.js";

let server: ServerProcess;

beforeAll(async () => {
  server = await startServerProcess();
});
afterAll(async () => {
  await server?.stop();
});

/** `mnemo mcp` as an MCP client launches it: a child process speaking JSON-RPC on stdio. */
async function stdioClient(env: Record<string, string>) {
  const transport = new StdioClientTransport({
    command: TSX,
    args: ["src/cli/main.ts", "mcp"],
    cwd: ROOT,
    env: childEnv(env),
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (d) => {
    stderr += d;
  });
  const client = new Client({ name: "mnemo-stdio-test", version: "0.0.0" });
  await client.connect(transport);
  const { tools } = await client.listTools();
  return { client, tools, stderr: () => stderr };
}

describe("MCP over Streamable HTTP (real server process)", () => {
  it("refuses /mcp without a key with 401", async () => {
    const res = await fetch(`${server.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(res.status).toBe(401);
    expect((await res.json()).detail.code).toBe("unauthorized");
  });

  it("lists the tools and runs them over real HTTP", async () => {
    const client = await httpClient({
      url: `${server.url}/mcp`,
      headers: { authorization: `Bearer ${server.key}`, "x-mnemo-user-id": "proc-user" },
    });
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...TOOL_NAMES].sort());
    const added = await callOk(client, tools, "add_memory", { text: "I drink my coffee black." });
    expect(added.structured.status).toBe("succeeded");
    const id = added.structured.result.memories_created[0].id;
    const listed = await callOk(client, tools, "list_memories", {});
    expect(listed.structured.data.map((m: { id: string }) => m.id)).toContain(id);
    const found = await callOk(client, tools, "search_memory", { query: "coffee", mode: "retrieve" });
    expect(found.structured.data.map((m: { id: string }) => m.id)).toContain(id);
    expect(
      await callErr(client, "get_memory", { memory_id: "00000000-0000-4000-8000-00000000beef" }),
    ).toMatch(/memory_not_found/);
    await client.close();
  });

  it("serves 20 concurrent clients, each its own answer", async () => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const client = await httpClient({ url: `${server.url}/mcp`, headers: { "x-api-key": server.key } });
        const { tools } = await client.listTools();
        const memoryId = `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`;
        const jobId = `job_${String(i).padStart(32, "0")}`;
        const [memory, job, group] = await Promise.all([
          callErr(client, "get_memory", { memory_id: memoryId }),
          callErr(client, "get_ingest_job", { job_id: jobId }),
          callOk(client, tools, "create_group", { name: `proc-group-${i}` }),
        ]);
        const updated = await callOk(client, tools, "update_group", {
          group_id: group.structured.id,
          prompt: `prompt ${i}`,
        });
        await client.close();
        return { memory, job, group: [updated.structured.name, updated.structured.prompt] };
      }),
    );
    answers.forEach(({ memory, job, group }, i) => {
      expect(memory).toMatch(new RegExp(`memory_not_found.*-${String(i).padStart(12, "0")}`, "s"));
      expect(job).toMatch(new RegExp(`job_not_found.*job_${String(i).padStart(32, "0")}`, "s"));
      expect(group).toEqual([`proc-group-${i}`, `prompt ${i}`]);
    });
  });
});

describe("MCP over stdio (spawned `mnemo mcp`)", () => {
  it("talks to a running server with MNEMO_URL and MNEMO_API_KEY, with the default user from config", async () => {
    const { client, tools } = await stdioClient({
      MNEMO_URL: server.url,
      MNEMO_API_KEY: server.key,
      MNEMO_DEFAULT_USER_ID: "stdio-user",
    });
    expect(tools.map((t) => t.name).sort()).toEqual([...TOOL_NAMES].sort());
    const added = await callOk(client, tools, "add_memory", { text: "My favourite editor is Helix." });
    const id = added.structured.result.memories_created[0].id;
    const mine = await callOk(client, tools, "get_memory", { memory_id: id });
    expect(mine.structured.user_id).toBe("stdio-user");
    const listed = await callOk(client, tools, "list_memories", {});
    expect(listed.structured.data.every((m: { user_id: string }) => m.user_id === "stdio-user")).toBe(true);
    await client.close();
  });

  it("answers every call with unauthorized when the key is wrong", async () => {
    const { client } = await stdioClient({
      MNEMO_URL: server.url,
      MNEMO_API_KEY: "mnemo_wrong_key_for_sure",
    });
    expect(await callErr(client, "list_groups", {})).toMatch(/unauthorized.*MNEMO_API_KEY/s);
    await client.close();
  });

  it("runs on its own database with MNEMO_BOOTSTRAP_API_KEY, logging only to stderr", async () => {
    const dataDir = migratedDataDir("mnemo-stdio-");
    // Its own embedded data directory, or on a server pass its own fresh database.
    const serverDb = onServer() ? await createTestDatabase() : undefined;
    try {
      const { client, tools, stderr } = await stdioClient({
        MNEMO_DATA_DIR: dataDir,
        ...(serverDb ? { DATABASE_URL: serverDb.url } : {}),
        MNEMO_BOOTSTRAP_API_KEY: "mnemo_stdio_local_bootstrap_key_000",
        MNEMO_DEFAULT_USER_ID: "local-user",
        LOG_LEVEL: "debug",
      });
      const g = await callOk(client, tools, "create_group", { name: "local" });
      const listed = await callOk(client, tools, "list_groups", {});
      expect(listed.structured.data.map((x: { id: string }) => x.id)).toEqual([g.structured.id]);
      const added = await callOk(client, tools, "add_memory", { text: "I am allergic to peanuts." });
      expect(added.structured.status).toBe("succeeded");
      // The protocol held on stdout while the service logged (JSON lines) on stderr.
      await waitFor(async () => stderr().includes('"msg":"request"'));
      await client.close();
    } finally {
      await serverDb?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

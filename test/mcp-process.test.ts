import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_LINE_BYTES } from "../mcp/stdio-transport.js";
import { authenticate } from "../src/auth/authenticate.js";
import { createApiKey } from "../src/auth/keys.js";
import { createDb } from "../src/db/db.js";
import { waitFor } from "./helpers/harness.js";
import { JWT_AUDIENCE, JWT_ISSUER, JWT_SECRET, signToken } from "./helpers/jwks-server.js";
import { callErr, callOk, httpClient, stdioClient, TOOL_NAMES } from "./helpers/mcp-client.js";
import {
  childEnv,
  MAIN,
  migratedDataDir,
  ROOT,
  type ServerProcess,
  startServerProcess,
  unmigratedDataDir,
} from "./helpers/process.js";
import { createTestDatabase, onServer } from "./helpers/test-db.js";

let server: ServerProcess;

beforeAll(async () => {
  server = await startServerProcess({
    MNEMO_JWT_SECRET: JWT_SECRET,
    MNEMO_JWT_ISSUER: JWT_ISSUER,
    MNEMO_JWT_AUDIENCE: JWT_AUDIENCE,
  });
});
afterAll(async () => {
  await server?.stop();
});

/** `mnemo mcp` as an MCP client launches it: a child process speaking JSON-RPC on stdio. */
/** `mnemo mcp` on raw stdin and stdout lines, for what an SDK client never sends. */
function rawStdio(env: Record<string, string>) {
  const child = spawn(process.execPath, [MAIN, "mcp"], {
    cwd: ROOT,
    env: childEnv(env),
    stdio: ["pipe", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => {
    out += d;
  });
  child.stderr.on("data", (d) => {
    err += d;
  });
  // A process that exited early fails the assertions, not the run (EPIPE on a later write).
  child.stdin.on("error", () => {});
  const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  const answers = (): { id: unknown; result?: unknown; error?: { code: number; message: string } }[] =>
    out
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  return {
    child,
    exited,
    /** Ends a process a failed test left running. */
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      return exited;
    },
    answers,
    stderr: () => err,
    write: (...lines: string[]) => child.stdin.write(lines.map((l) => `${l}\n`).join("")),
    /** The matches of `pattern` (global) in the log, once there are at least `n`. */
    logged: (pattern: RegExp, n: number, timeoutMs?: number) =>
      waitFor(
        async () => {
          const found = err.match(pattern);
          return found !== null && found.length >= n && [...found];
        },
        timeoutMs === undefined ? {} : { timeoutMs },
      ),
    /** Every answer to `ids`, once all have arrived. */
    answered: (ids: unknown[]) =>
      waitFor(async () => ids.every((id) => answers().some((a) => a.id === id)) && answers()),
  };
}

const INIT = JSON.stringify({
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
});
const rpc = (id: number | string, method: string, params?: unknown) =>
  JSON.stringify({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) });

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
    // An argument the tool does not know is refused by name over stdio too, never dropped.
    for (const t of tools) expect(t.inputSchema.additionalProperties, t.name).toBe(false);
    expect(await callErr(client, "list_memories", { userId: "someone" })).toMatch(
      /Unrecognized key: "userId"/,
    );
    await client.close();
  });

  it("acts as the user of a key made for one user or a JWT's, ahead of MNEMO_DEFAULT_USER_ID (remote and local)", async () => {
    const db = createDb(server.databaseUrl, 2);
    let alice: string;
    let dave: string;
    try {
      const { orgId } = await authenticate(db, { apiKey: server.key });
      alice = (await createApiKey(db, { orgId, userId: "stdio-alice", kind: "service" })).key;
      dave = (await createApiKey(db, { orgId, userId: "stdio-dave", kind: "service" })).key;
    } finally {
      await db.close();
    }
    // A JWT of the identity provider's user erin: every call was user_mismatch (with a default
    // user) or missing_scope (without), the key list naming no key of hers.
    const token = await signToken("secret", { org: `idp_org_${Date.now()}`, sub: "stdio-erin" });
    const modes: [string, string, Record<string, string>][] = [
      ["remote", "stdio-alice", { MNEMO_URL: server.url, MNEMO_API_KEY: alice }],
      ["local", "stdio-dave", { DATABASE_URL: server.databaseUrl, MNEMO_API_KEY: dave }],
      ["remote JWT", "stdio-erin", { MNEMO_URL: server.url, MNEMO_API_KEY: token }],
    ];
    for (const [mode, user, env] of modes) {
      // No user_id anywhere: the key's user writes.
      const first = await stdioClient(env);
      const added = await callOk(first.client, first.tools, "add_memory", {
        text: `I drive a red Fiat (${mode}).`,
      });
      const id = added.structured.result.memories_created[0].id;
      const got = await callOk(first.client, first.tools, "get_memory", { memory_id: id });
      expect([mode, got.structured.user_id]).toEqual([mode, user]);
      await first.client.close();
      // A configured default user does not override the key's own.
      const second = await stdioClient({ ...env, MNEMO_DEFAULT_USER_ID: "someone-else" });
      const listed = await callOk(second.client, second.tools, "list_memories", {});
      const rows = listed.structured.data as { id: string; user_id: string }[];
      expect([mode, rows.map((m) => m.id)]).toEqual([mode, expect.arrayContaining([id])]);
      expect([mode, [...new Set(rows.map((m) => m.user_id))]]).toEqual([mode, [user]]);
      await second.client.close();
    }
  });

  it("refuses a call over MNEMO_MAX_BODY_BYTES with payload_too_large, remote and local alike", async () => {
    // Over the server's bound (1 MiB) as the REST body the call makes; well under a line's (10 MiB).
    const text = `My diary: ${"x".repeat(1024 * 1024)}`;
    const answers: string[] = [];
    const modes: Record<string, string>[] = [{ MNEMO_URL: server.url }, { DATABASE_URL: server.databaseUrl }];
    for (const env of modes) {
      const { client } = await stdioClient({ ...env, MNEMO_API_KEY: server.key });
      // Not waiting: a call let through (the local database's took it and stored it) answers at once.
      answers.push(await callErr(client, "add_memory", { text, user_id: "big-body", wait: false }));
      await client.close();
    }
    expect(answers[0]).toBe("Error payload_too_large: The request body is larger than 1048576 bytes.");
    expect(answers[1]).toBe(answers[0]);
  });

  it("answers every line: -32700 for one that is not JSON, -32600 with the id for a bad envelope", async () => {
    const p = rawStdio({ MNEMO_URL: server.url, MNEMO_API_KEY: server.key });
    try {
      p.write(
        INIT,
        "not json",
        '{"jsonrpc":"2.0","id":5',
        "[1,2]",
        '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":null}',
        '{"jsonrpc":"2.0","id":71,"method":"tools/list","params":[]}',
        rpc(73, "tools/call", { name: "get_memory", arguments: { memory_id: "x" }, _meta: 5 }),
        '{"jsonrpc":"1.0","id":"v1","method":"ping"}',
        '{"jsonrpc":"2.0","id":75}',
        rpc(9, "ping"),
      );
      const answers = await p.answered([0, 7, 71, 73, "v1", 75, 9]);
      const errors = (id: unknown) => answers.filter((a) => a.id === id).map((a) => a.error?.code);
      expect(errors(null)).toEqual([-32700, -32700, -32600]);
      for (const id of [7, 71, 73, "v1", 75]) expect([id, errors(id)]).toEqual([id, [-32600]]);
      expect(answers.find((a) => a.id === 73)?.error?.message).toMatch(/params\._meta/);
      expect(answers.find((a) => a.id === 9)?.result).toEqual({});
      // Each refusal is logged, and the process still serves. The log is another pipe, which
      // may arrive after the answers: wait for it.
      const logged = await p.logged(/mcp stdio: a line that is not JSON/g, 2);
      expect(logged).toHaveLength(2);
      expect(p.child.exitCode).toBeNull();
    } finally {
      p.child.stdin.end();
      expect(await p.exited).toBe(0);
    }
  });

  it("refuses a line over the size bound with an error answer, and keeps serving", async () => {
    const p = rawStdio({ MNEMO_URL: server.url, MNEMO_API_KEY: server.key });
    try {
      // The SDK client writes the id last; another client may write it first.
      const pad = "c".repeat(MAX_LINE_BYTES);
      p.write(INIT, JSON.stringify({ method: "ping", params: { pad }, jsonrpc: "2.0", id: 4 }));
      p.write(rpc("first", "ping", { pad }), rpc(5, "ping"));
      const answers = await p.answered([0, 4, "first", 5]);
      for (const id of [4, "first"]) {
        const refused = answers.find((a) => a.id === id);
        expect([id, refused?.error?.code]).toEqual([id, -32600]);
        expect(refused?.error?.message).toMatch(/at most 10485760/);
      }
      expect(answers.find((a) => a.id === 5)?.result).toEqual({});
      expect(await p.logged(/a line over the size bound was skipped/g, 2)).toHaveLength(2);
      expect(p.child.exitCode).toBeNull();
    } finally {
      p.child.stdin.end();
      expect(await p.exited).toBe(0);
    }
  });

  it("answers the requests it read before the end of input, then exits 0", async () => {
    const p = rawStdio({
      MNEMO_URL: server.url,
      MNEMO_API_KEY: server.key,
      MNEMO_DEFAULT_USER_ID: "eof-user",
    });
    p.write(
      INIT,
      '{"jsonrpc":"2.0","method":"notifications/initialized"}',
      rpc(2, "tools/call", { name: "search_memory", arguments: { query: "car", mode: "retrieve" } }),
      rpc(3, "tools/call", { name: "list_memories", arguments: {} }),
    );
    // The last line has no newline: it is still a line.
    p.child.stdin.end(rpc(4, "tools/call", { name: "list_groups", arguments: {} }));
    expect(await p.exited).toBe(0);
    const answers = p.answers();
    expect(answers.map((a) => a.id).sort()).toEqual([0, 2, 3, 4]);
    expect(answers.every((a) => a.error === undefined && a.result !== undefined)).toBe(true);
  });

  it("on a stop signal (SIGHUP, then SIGTERM) answers the requests it read, closes the database, exits 0", async () => {
    const dataDir = migratedDataDir("mnemo-stdio-stop-");
    const serverDb = onServer() ? await createTestDatabase() : undefined;
    const p = rawStdio({
      MNEMO_DATA_DIR: dataDir,
      ...(serverDb ? { DATABASE_URL: serverDb.url } : {}),
      MNEMO_BOOTSTRAP_API_KEY: "mnemo_stdio_stop_bootstrap_key_0001",
      MNEMO_DEFAULT_USER_ID: "stop-user",
      // The ingest jobs are still running when the signal comes (they finish well inside the
      // shutdown time-out).
      MNEMO_TEST_EXTRACT_DELAY_MS: "2000",
    });
    try {
      p.write(INIT, '{"jsonrpc":"2.0","method":"notifications/initialized"}');
      const adds = [1, 2, 3, 4];
      for (const id of adds) {
        p.write(rpc(id, "tools/call", { name: "add_memory", arguments: { text: `I own ${id} bicycles.` } }));
      }
      p.write(rpc(5, "tools/call", { name: "search_memory", arguments: { query: "bicycles" } }));
      await p.logged(/"msg":"ingest accepted"/g, 1, 150_000);
      // A repeated signal changes nothing. Before, SIGHUP killed the process at once, and SIGTERM
      // ended it (exit 0) without answering, the tools failing on the closed pool.
      p.child.kill("SIGHUP");
      p.child.kill("SIGTERM");
      expect(await p.exited).toBe(0);
      const answers = p.answers();
      expect(answers.map((a) => a.id).sort()).toEqual([0, ...adds, 5]);
      for (const a of answers) {
        expect([a.id, a.error, (a.result as { isError?: boolean } | undefined)?.isError]).toEqual([
          a.id,
          undefined,
          undefined,
        ]);
      }
      // The kernel may hand the two signals to the process in either order: the first one starts
      // the shutdown, the second one is logged and changes nothing.
      const stops = [
        ...p.stderr().matchAll(/"signal":"(SIGHUP|SIGTERM)","msg":"(already shutting down|shutting down)"/g),
      ];
      expect(stops.map((m) => m[2])).toEqual(["shutting down", "already shutting down"]);
      expect(stops.map((m) => m[1]).sort()).toEqual(["SIGHUP", "SIGTERM"]);
      expect(p.stderr()).toContain('"msg":"stopped"');
      expect(p.stderr()).not.toContain("mcp tool failed");
      // The embedded database was closed: its owner removed its record.
      expect(existsSync(path.join(dataDir, "server.json"))).toBe(false);
    } finally {
      await p.kill();
      await serverDb?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 240_000);

  it("a SIGTERM during start-up stops it once started, exit 0", async () => {
    // An empty database (initdb run, in a copy; or on the server): start-up migrates it, seconds
    // after the database opened.
    const dataDir = onServer()
      ? mkdtempSync(path.join(os.tmpdir(), "mnemo-stdio-early-"))
      : unmigratedDataDir("mnemo-stdio-early-");
    const serverDb = onServer() ? await createTestDatabase({ fromTemplate: false }) : undefined;
    const p = rawStdio({
      MNEMO_DATA_DIR: dataDir,
      ...(serverDb ? { DATABASE_URL: serverDb.url } : {}),
      MNEMO_BOOTSTRAP_API_KEY: "mnemo_stdio_early_bootstrap_key_001",
    });
    try {
      await p.logged(/"msg":"(embedded database ready|migrations applied)"/g, 1, 170_000);
      p.child.kill("SIGTERM");
      // Not killed by the signal (it was: exit 143, its lock files left behind).
      expect(await p.exited).toBe(0);
      expect(p.stderr()).toContain('"msg":"shutting down"');
      expect(p.stderr()).toContain('"msg":"stopped"');
      expect(existsSync(path.join(dataDir, "server.json"))).toBe(false);
    } finally {
      await p.kill();
      await serverDb?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 240_000);

  it("a SIGTERM while its modules still load stops it once started, exit 0", async () => {
    const p = rawStdio({ MNEMO_URL: server.url, MNEMO_API_KEY: server.key });
    try {
      // As soon as the process catches the stop signals (the entry holds them before the commands
      // load, a second and more here; read by SIGHUP's bit, which Node itself leaves alone): a
      // SIGTERM then used to end it at once, exit 143.
      const caught = () => {
        try {
          const mask = /SigCgt:\s*([0-9a-f]+)/.exec(readFileSync(`/proc/${p.child.pid}/status`, "utf8"))?.[1];
          return mask !== undefined && (BigInt(`0x${mask}`) & 1n) !== 0n;
        } catch {
          return false;
        }
      };
      for (let i = 0; i < 2000 && !caught() && p.child.exitCode === null; i++)
        await new Promise((r) => setTimeout(r, 5));
      p.child.kill("SIGTERM");
      expect(await p.exited).toBe(0);
      expect(p.stderr()).toContain('"signal":"SIGTERM","msg":"shutting down"');
    } finally {
      await p.kill();
    }
  }, 60_000);

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

import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, describe, expect, it } from "vitest";
import { toolError } from "../mcp/errors.js";
import { createDb } from "../src/db/db.js";
import { startEmbedded } from "../src/db/embedded.js";
import { isDatabaseUnavailable } from "../src/errors.js";
import { waitFor } from "./helpers/harness.js";
import { callOk, stdioClient } from "./helpers/mcp-client.js";
import { freePort, type MnemoProcess, migratedDataDir, spawnMnemo } from "./helpers/process.js";
import { migratedTemplateDump } from "./helpers/test-db.js";

/**
 * `npm run api` and `npm run worker` on one embedded data directory: the first to start owns it,
 * the other attaches. Killing the owner with SIGKILL must not take the attached one down: it
 * reports not ready while the owner is away, and serves the database itself once it can take the
 * lock (the owner frozen, holding it, is waited for).
 *
 * EMBEDDED-ONLY (left out of the PostgreSQL pass in vitest.config.ts): with DATABASE_URL every
 * process connects to the server itself; a killed peer there is test/split-processes.test.ts.
 */
const KEY = "mnemo_test_owner_away_bootstrap_key_01";
const dirs: string[] = [];
const procs: MnemoProcess[] = [];
afterAll(async () => {
  await Promise.all(procs.map((p) => p.kill("SIGKILL")));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function role(
  name: "api" | "worker",
  dataDir: string,
  port?: number,
  env: Record<string, string> = {},
) {
  const p = spawnMnemo([name], {
    MNEMO_DATA_DIR: dataDir,
    PORT: String(port ?? (await freePort())),
    MNEMO_BOOTSTRAP_API_KEY: KEY,
    ...env,
  });
  procs.push(p);
  await p.waitFor(/"msg":"ready"/, 170_000);
  return p;
}

const alive = (p: MnemoProcess) => p.child.exitCode === null && p.child.signalCode === null;
const status = (url: string, init?: RequestInit) =>
  fetch(url, init).then(
    (r) => r.status,
    () => 0,
  );
const ingest = (base: string, text: string, wait = true) =>
  fetch(`${base}/v1/memories?wait=${wait}`, {
    method: "POST",
    headers: { "x-api-key": KEY, "content-type": "application/json" },
    body: JSON.stringify({ user_id: "u1", conv_id: "c1", messages: [{ role: "user", content: text }] }),
  });

describe("the pool outlives the database", () => {
  it("a client held in a transaction when the server goes away fails that transaction, not the process", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "mn-away-"));
    dirs.push(dir);
    // In memory, loaded from the run's dump rather than made by initdb (seconds of CPU each).
    const memory = { dataDir: dir, maxConnections: 10, inMemory: true };
    const first = await startEmbedded({ ...memory, loadDataDir: migratedTemplateDump() });
    const db = createDb(first.connectionString, 4);
    try {
      const held = db.tx(async (c) => {
        await c.query("SELECT 1");
        // The connection dies while this client is checked out and between statements.
        await first.stop();
        await new Promise((r) => setTimeout(r, 300));
        await c.query("SELECT 2");
      });
      // Both read as the database being away (503, not 500, over HTTP: rest/errors.ts).
      const lost = await held.then(
        () => null,
        (e: unknown) => e,
      );
      expect(isDatabaseUnavailable(lost), String(lost)).toBe(true);
      const refused = await db.query("SELECT 1").then(
        () => null,
        (e: unknown) => e,
      );
      expect(isDatabaseUnavailable(refused), String(refused)).toBe(true);
      // An MCP tool says so too, with the code REST gives (503 service_unavailable).
      expect(toolError(refused).content).toEqual([
        { type: "text", text: expect.stringMatching(/^Error service_unavailable: /) },
      ]);
      // A new owner on the same directory: the same pool connects again.
      const second = await startEmbedded({ ...memory, loadDataDir: migratedTemplateDump() });
      try {
        await waitFor(() =>
          db.query("SELECT 42 AS n").then(
            (r) => r.rows[0].n === 42,
            () => false,
          ),
        );
        expect((await db.tx((c) => c.query("SELECT 7 AS n"))).rows[0].n).toBe(7);
        // A statement that fails on its own is not the database being away.
        const own = await db.query("SELECT 1 / 0").then(
          () => null,
          (e: unknown) => e,
        );
        expect(own).not.toBeNull();
        expect(isDatabaseUnavailable(own)).toBe(false);
      } finally {
        await db.close();
        await second.stop();
      }
    } finally {
      await db.close();
      await first.stop();
    }
  }, 180_000);
});

describe("the attached process outlives the owner", () => {
  it("api attached to a worker: serves the database itself once the owner is killed, under load; the owner restarted attaches", async () => {
    const dir = migratedDataDir("mn-away-");
    dirs.push(dir);
    const owner = await role("worker", dir);
    const port = await freePort();
    const api = await role("api", dir, port);
    expect(api.stdout()).toContain("attaching to the embedded database");
    const base = `http://127.0.0.1:${port}`;
    expect(await status(`${base}/readyz`)).toBe(200);

    // Keep the api's pool busy (checked-out clients, transactions, wait=true polls) while the
    // owner is killed. A request the owner's going fails is 503 (the database away), never 500.
    let load = true;
    const seen = new Set<number>();
    const loops = Array.from({ length: 6 }, async (_, i) => {
      while (load) {
        seen.add(
          await (i % 2
            ? ingest(base, `I like tea number ${i}.`).then(
                (r) => r.status,
                () => 0,
              )
            : status(`${base}/v1/groups`, { headers: { "x-api-key": KEY } })),
        );
      }
    });
    await new Promise((r) => setTimeout(r, 1500));
    owner.child.kill("SIGKILL");
    await owner.exited;

    // Nothing restarts the owner: the api takes the lock and serves the database itself (it
    // answered 503 until an owner was started again, for ever when none was).
    await api.waitFor(/this one serves it now/, 30_000);
    await waitFor(async () => (await status(`${base}/readyz`)) === 200, { timeoutMs: 30_000 });
    expect(await status(`${base}/v1/groups`, { headers: { "x-api-key": KEY } })).toBe(200);
    load = false;
    await Promise.all(loops);
    expect([...seen].filter((s) => s >= 500 && s !== 503)).toEqual([]);
    expect(alive(api)).toBe(true);
    expect(api.stderr() + api.stdout()).not.toMatch(/Unhandled 'error' event|uncaught/i);

    // The owner's process manager starts it again: it attaches to the api, and works the jobs.
    const again = await role("worker", dir);
    expect(again.stdout()).toContain("attaching to the embedded database");
    const res = await ingest(base, "I live in Porto.");
    expect(res.status).toBe(200);
    expect(((await res.json()) as { status: string }).status).toBe("succeeded");
    expect(alive(api)).toBe(true);
  }, 180_000);

  it("api attached to a frozen owner (SIGSTOP): /readyz and requests 503 within their bounds, 200 after SIGCONT", async () => {
    const dir = migratedDataDir("mn-frozen-");
    dirs.push(dir);
    const owner = await role("worker", dir);
    const port = await freePort();
    const api = await role("api", dir, port, { MNEMO_DB_QUERY_TIMEOUT_MS: "3000" });
    const base = `http://127.0.0.1:${port}`;
    const groups = () => fetch(`${base}/v1/groups`, { headers: { "x-api-key": KEY } });
    // A warm pool: open connections to the owner, which stop being answered.
    expect((await Promise.all([1, 2, 3, 4].map(groups))).map((r) => r.status)).toEqual([200, 200, 200, 200]);
    owner.child.kill("SIGSTOP");
    try {
      const timed = async (send: () => Promise<Response>) => {
        const t0 = Date.now();
        const res = await send();
        return { res, ms: Date.now() - t0, body: (await res.json()) as any };
      };
      const [ready, listed] = await Promise.all([timed(() => fetch(`${base}/readyz`)), timed(groups)]);
      // Before: both waited for as long as the owner was stopped (64 s observed), then 200.
      expect(ready.res.status).toBe(503);
      expect(ready.body).toEqual({ status: "database not answering" });
      expect(ready.ms).toBeLessThan(3500);
      expect(listed.res.status).toBe(503);
      expect(listed.body.detail.code).toBe("service_unavailable");
      expect(listed.res.headers.get("retry-after")).toBe("1");
      expect(listed.ms).toBeLessThan(5500);
    } finally {
      owner.child.kill("SIGCONT");
    }
    await waitFor(async () => (await status(`${base}/readyz`)) === 200, { timeoutMs: 30_000 });
    expect((await groups()).status).toBe(200);
    expect(alive(api)).toBe(true);
    expect(alive(owner)).toBe(true);
  }, 180_000);

  it("worker attached to an api: serves the database itself once the owner is gone, and finishes the job", async () => {
    const dir = migratedDataDir("mn-away-");
    dirs.push(dir);
    const port = await freePort();
    const owner = await role("api", dir, port);
    // Each attempt sits in its extract stage for 3 s: long enough for the owner to go under it.
    const worker = await role("worker", dir, undefined, { MNEMO_TEST_EXTRACT_DELAY_MS: "3000" });
    expect(worker.stdout()).toContain("attaching to the embedded database");
    const base = `http://127.0.0.1:${port}`;
    const job = (await (await ingest(base, "I moved to Tromsø in March.", false)).json()) as { id: string };
    const jobStatus = async () => {
      const r = await fetch(`${base}/v1/memories/jobs/${job.id}`, { headers: { "x-api-key": KEY } });
      return r.ok ? ((await r.json()) as { status: string }).status : undefined;
    };
    await waitFor(async () => (await jobStatus()) === "running", { timeoutMs: 30_000 });
    owner.child.kill("SIGKILL");
    await owner.exited;
    await worker.waitFor(/this one serves it now/, 30_000);
    expect(alive(worker)).toBe(true);

    // The api started again attaches to the worker, which finished the job under way (its
    // attempt, interrupted or not, ran on against the database it now serves).
    const api = await role("api", dir, port);
    expect(api.stdout()).toContain("attaching to the embedded database");
    await waitFor(async () => (await jobStatus()) === "succeeded", { timeoutMs: 60_000, intervalMs: 250 });
    const res = await ingest(base, "I work as a baker.");
    expect(res.status).toBe(200);
    expect(((await res.json()) as { status: string }).status).toBe("succeeded");
    expect(alive(worker)).toBe(true);
  }, 180_000);
});

describe("serve beside an IDE's mnemo mcp on one data directory", () => {
  it("serve attached to a stdio mnemo mcp serves the database itself once the IDE closes it", async () => {
    // The IDE's `mnemo mcp` started first and owns the directory; `serve` attaches. Before, once
    // the IDE closed it, serve answered 503 for ever (only an attached mcp took over).
    const dir = migratedDataDir("mn-serve-mcp-");
    dirs.push(dir);
    const ide = await stdioClient({
      MNEMO_DATA_DIR: dir,
      MNEMO_BOOTSTRAP_API_KEY: KEY,
      MNEMO_DEFAULT_USER_ID: "u1",
    });
    const port = await freePort();
    const serve = spawnMnemo(["serve"], {
      MNEMO_DATA_DIR: dir,
      PORT: String(port),
      MNEMO_BOOTSTRAP_API_KEY: KEY,
    });
    procs.push(serve);
    await serve.waitFor(/"msg":"ready"/, 170_000);
    expect(serve.stdout()).toContain("attaching to the embedded database");
    const base = `http://127.0.0.1:${port}`;
    await callOk(ide.client, ide.tools, "add_memory", { text: "I keep bees on the roof." });
    await ide.client.close();

    await serve.waitFor(/this one serves it now/, 30_000);
    await waitFor(async () => (await status(`${base}/readyz`)) === 200, { timeoutMs: 30_000 });
    const found = await fetch(`${base}/v1/memories/search`, {
      method: "POST",
      headers: { "x-api-key": KEY, "content-type": "application/json" },
      body: JSON.stringify({ query: "bees", user_id: "u1", mode: "retrieve" }),
    });
    expect(found.status).toBe(200);
    expect(JSON.stringify(await found.json())).toContain("bees");
    const res = await ingest(base, "I live in Porto.");
    expect(res.status).toBe(200);
    expect(((await res.json()) as { status: string }).status).toBe("succeeded");
    expect(alive(serve)).toBe(true);
  }, 240_000);
});

describe("mnemo mcp beside another on one data directory", () => {
  it("beside another mnemo mcp on the data directory, serves it itself once the other is gone", async () => {
    // Two IDEs, each spawning `mnemo mcp` on one embedded data directory: the first owns it, the
    // second attaches. Before, once the first closed, every call of the second answered
    // service_unavailable for good (nothing brings an IDE's owner back).
    const dataDir = migratedDataDir("mnemo-stdio-two-");
    const env = {
      MNEMO_DATA_DIR: dataDir,
      MNEMO_BOOTSTRAP_API_KEY: "mnemo_stdio_two_bootstrap_key_00001",
      MNEMO_DEFAULT_USER_ID: "two-user",
    };
    const a = await stdioClient(env);
    const b = await stdioClient(env);
    try {
      expect(b.stderr()).toContain("attaching to the embedded database served by another process");
      await callOk(a.client, a.tools, "add_memory", { text: "I keep bees on the roof." });
      await a.client.close();
      const found = await waitFor(
        async () => {
          const res = (await b.client.callTool({
            name: "search_memory",
            arguments: { query: "bees", mode: "retrieve" },
          })) as CallToolResult;
          return !res.isError && res;
        },
        { timeoutMs: 60_000, intervalMs: 500 },
      );
      expect(JSON.stringify(found.structuredContent)).toContain("bees");
      expect(b.stderr()).toContain("this one serves it now");
    } finally {
      await a.client.close().catch(() => {});
      await b.client.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 180_000);

  it("an owner killed while it is still starting: it starts again as the owner, answers, exit 0", async () => {
    const dataDir = migratedDataDir("mn-mcp-start-");
    dirs.push(dataDir);
    const owner = await role("worker", dataDir);
    const rpc = (id: number, method: string, params: object) =>
      JSON.stringify({ jsonrpc: "2.0", id, method, params });
    const lines = [
      rpc(0, "initialize", {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "t", version: "0" },
      }),
      JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
      rpc(1, "tools/call", { name: "list_groups", arguments: {} }),
    ];
    const b = spawnMnemo(
      ["mcp"],
      { MNEMO_DATA_DIR: dataDir, MNEMO_API_KEY: KEY, MNEMO_DEFAULT_USER_ID: "u1" },
      { stdin: `${lines.join("\n")}\n` },
    );
    procs.push(b);
    // Attached, its start-up's queries still to run: the owner dies under them. It exited 1
    // ("connect ENOENT .../.s.PGSQL.5432"), and the MCP client saw the connection close.
    await b.waitFor(/attaching to the embedded database served by another process/, 120_000);
    owner.child.kill("SIGKILL");
    expect(await b.exited).toBe(0);
    const answer = b
      .stdout()
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { id?: number; result?: { isError?: boolean } })
      .find((m) => m.id === 1);
    expect(answer?.result?.isError).toBeUndefined();
  }, 240_000);
});

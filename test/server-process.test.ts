import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, type MnemoProcess, runMnemo, spawnMnemo } from "./helpers/process.js";
import { createTestDatabase, onServer, type TestDatabase } from "./helpers/test-db.js";

/**
 * The real entry point as a user runs it: a process on a fresh database (the embedded one in a
 * new data directory, or with MNEMO_TEST_DATABASE_URL a new empty database on that server given
 * as DATABASE_URL), spoken to over real HTTP, with the admin CLI alongside.
 */
const dataDir = mkdtempSync(path.join(os.tmpdir(), "mn-e2e-"));
let server: MnemoProcess | undefined;
let serverDb: TestDatabase | undefined;
const dbEnv = (): Record<string, string> => (serverDb ? { DATABASE_URL: serverDb.url } : {});
beforeAll(async () => {
  if (onServer()) serverDb = await createTestDatabase({ fromTemplate: false });
});
afterAll(async () => {
  await server?.kill("SIGKILL");
  await serverDb?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function start(env: Record<string, string> = {}) {
  const port = await freePort();
  const p = spawnMnemo(["serve"], { MNEMO_DATA_DIR: dataDir, PORT: String(port), ...dbEnv(), ...env });
  await p.waitFor(/"msg":"listening"/);
  return { p, base: `http://127.0.0.1:${port}` };
}

const admin = (...args: string[]) =>
  runMnemo(["admin", ...args], { MNEMO_DATA_DIR: dataDir, LOG_LEVEL: "warn", ...dbEnv() });

// Each test spawns several real processes one after another: on a loaded shared machine a
// start-up alone can take tens of seconds.
describe("the server process", { timeout: 180_000 }, () => {
  let firstKey = "";
  let base = "";

  it("starts on a fresh data directory, prints a key once, and answers JSON with it", async () => {
    const s = await start();
    server = s.p;
    base = s.base;
    const m = await s.p.waitFor(/API key \(shown once, keep it\):\s+(mnemo_\S+)/);
    firstKey = m[1]!;
    expect(s.p.stdout()).toContain(`curl -s -H "x-api-key: ${firstKey}"`);
    const r = await fetch(`${base}/v1/groups`, { headers: { "x-api-key": firstKey } });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/application\/json/);
    expect(await r.json()).toMatchObject({ object: "list", data: [] });
    const unauth = await fetch(`${base}/v1/groups`);
    expect(unauth.status).toBe(401);
  });

  it("admin CLI works while the server runs", async () => {
    // Names as given, trimmed (a blank one is refused: test/cli.test.ts).
    const created = await admin("create-org", "--name", "  acme ", "--json");
    expect(created.code).toBe(0);
    const org = JSON.parse(created.stdout);
    expect(org).toMatchObject({
      org_id: expect.stringMatching(/^org_/),
      name: "acme",
      api_key: expect.stringMatching(/^mnemo_/),
    });
    expect(
      (await fetch(`${base}/v1/groups`, { headers: { authorization: `Bearer ${org.api_key}` } })).status,
    ).toBe(200);

    const key2 = JSON.parse(
      (await admin("create-key", "--org", org.org_id, "--name", " ci ", "--json")).stdout,
    );
    expect(key2.org_id).toBe(org.org_id);
    const listed = JSON.parse((await admin("list-keys", "--org", org.org_id, "--json")).stdout);
    expect(listed.find((k: { id: string }) => k.id === key2.key_id)).toMatchObject({
      name: "ci",
      user_id: null,
    });
    expect(JSON.stringify(listed)).not.toContain(key2.api_key);

    expect((await admin("revoke-key", key2.key_id, "--json")).code).toBe(0);
    expect((await fetch(`${base}/v1/groups`, { headers: { "x-api-key": key2.api_key } })).status).toBe(401);

    const missing = await admin("list-keys", "--org", "org_nope");
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/org_nope/);
  });

  it("stops cleanly on SIGTERM and keeps its data across a restart", async () => {
    const created = await fetch(`${base}/v1/groups`, {
      method: "POST",
      headers: { "x-api-key": firstKey, "content-type": "application/json" },
      body: JSON.stringify({ name: "kept" }),
    });
    expect(created.status).toBe(201);
    expect(await server!.kill("SIGTERM")).toBe(0);

    // Admin works with no server running, on the same data directory.
    const offline = await admin("create-org", "--name", "offline", "--json");
    expect(offline.code).toBe(0);

    const s = await start();
    server = s.p;
    expect(s.p.stdout()).not.toContain("First start");
    const r = await fetch(`${s.base}/v1/groups`, { headers: { "x-api-key": firstKey } });
    expect(r.status).toBe(200);
    const body = (await r.json()) as { data: Array<{ name: string }> };
    expect(body.data.map((g) => g.name)).toEqual(["kept"]);
    const offlineKey = JSON.parse(offline.stdout).api_key;
    expect((await fetch(`${s.base}/v1/groups`, { headers: { "x-api-key": offlineKey } })).status).toBe(200);
    expect(await server.kill("SIGTERM")).toBe(0);
  });

  it("finishes an in-flight request before exiting on SIGTERM", async () => {
    // A slow extractor keeps a wait=true ingest in flight while the signal arrives.
    const s = await start({ MNEMO_TEST_EXTRACT_DELAY_MS: "1500" });
    server = s.p;
    const inFlight = fetch(`${s.base}/v1/memories?wait=true`, {
      method: "POST",
      headers: { "x-api-key": firstKey, "content-type": "application/json" },
      body: JSON.stringify({
        user_id: "u1",
        conv_id: "c1",
        messages: [{ role: "user", content: "I live in Lisbon." }],
      }),
    });
    // The job is accepted (and the request is waiting on it) before the signal is sent.
    await s.p.waitFor(/"msg":"ingest accepted"/);
    const exited = s.p.kill("SIGTERM");
    const res = await inFlight;
    expect(res.status).toBe(200);
    expect(((await res.json()) as { status: string }).status).toBe("succeeded");
    expect(await exited).toBe(0);
    // Refused once stopped.
    await expect(fetch(`${s.base}/healthz`)).rejects.toThrow();
  });
});

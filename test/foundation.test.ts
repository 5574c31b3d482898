import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashApiKey } from "../src/auth/keys.js";
import { loadConfig } from "../src/config.js";
import { findKeyByHash, revokeApiKey } from "../src/db/api-keys.js";
import { createDb } from "../src/db/db.js";
import { startRuntime } from "../src/runtime.js";
import { TEST_EMBEDDING_DIM } from "./helpers/constants.js";
import { startTestService, type TestService } from "./helpers/harness.js";

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.stop();
});

describe("foundation", () => {
  it("serves health and readiness without a key", async () => {
    expect((await svc.request("GET", "/healthz")).body).toEqual({ status: "ok" });
    expect((await svc.request("GET", "/readyz")).body).toEqual({ status: "ready" });
  });

  it("refuses /v1 without a key", async () => {
    const r = await svc.request("GET", "/v1/groups");
    expect(r.status).toBe(401);
    expect(r.body.detail.code).toBe("unauthorized");
  });

  it("knows an organisation's key", async () => {
    const { key } = await svc.newOrg();
    const r = await svc.request("GET", "/v1/nope", { key });
    expect(r.status).toBe(404);
    expect(r.body.detail).toEqual({ code: "not_found", message: "No route for GET /v1/nope." });
    expect(r.body).toEqual({
      detail: { code: "not_found", message: "No route for GET /v1/nope." },
      error: {
        type: "not_found_error",
        code: "not_found",
        message: "No route for GET /v1/nope.",
        request_id: r.headers.get("x-request-id"),
      },
    });
    expect(r.headers.get("x-request-id")).toBeTruthy();
  });
});

describe("MNEMO_BOOTSTRAP_API_KEY", () => {
  it("creates the key on the first start; once revoked it stays revoked at the next, with a warning", async () => {
    const key = "mnemo_bootstrap_key_for_the_revoke_test";
    const first = await startTestService({ workers: false, env: { MNEMO_BOOTSTRAP_API_KEY: key } });
    const dir = mkdtempSync(path.join(os.tmpdir(), "mn-boot-"));
    try {
      expect((await first.request("GET", "/v1/groups", { key })).status).toBe(200);
      const row = await findKeyByHash(first.deps.db, hashApiKey(key));
      expect(row?.org_id).toBe("org_default");
      // The operator revokes it (it leaked), and a process starts again with the variable still set.
      await revokeApiKey(first.deps.db, row!.id);
      const lines: { level: number; msg: string }[] = [];
      const log = pino({ level: "info" }, { write: (l: string) => lines.push(JSON.parse(l)) });
      const config = loadConfig({
        LOG_LEVEL: "info",
        MNEMO_EMBEDDING_DIM: String(TEST_EMBEDDING_DIM),
        MNEMO_DATA_DIR: dir,
        MNEMO_BOOTSTRAP_API_KEY: key,
      });
      const db = createDb(first.connectionString, 2);
      const again = await startRuntime(
        config,
        log,
        { api: true, worker: false },
        { opened: { db, connectionString: first.connectionString, kind: "attached" }, listen: false },
      );
      await again.stop();
      expect((await findKeyByHash(first.deps.db, hashApiKey(key)))?.revoked_at).not.toBeNull();
      expect((await first.request("GET", "/v1/groups", { key })).status).toBe(401);
      const warned = lines.filter((l) => l.level === 40 && /MNEMO_BOOTSTRAP_API_KEY/.test(l.msg));
      expect(warned.map((l) => l.msg)).toEqual([
        "MNEMO_BOOTSTRAP_API_KEY names a key that was revoked: it stays revoked; unset the variable or set a new key",
      ]);
    } finally {
      await first.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

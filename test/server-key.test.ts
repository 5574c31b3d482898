import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyFingerprint, keyMismatch } from "../src/secret.js";
import { TEST_EMBEDDING_DIM } from "./helpers/constants.js";
import { startTestService, type TestService } from "./helpers/harness.js";
import { type MnemoProcess, type ServerProcess, spawnMnemo, startServerProcess } from "./helpers/process.js";
import { onServer } from "./helpers/test-db.js";

/**
 * Processes sharing a database must share the server key: with another one they refuse each
 * other's cursors and cannot read each other's webhook secrets. Each start records the key's
 * fingerprint; a process whose key differs from the last one says so at start-up.
 */
describe("one server key for every process of a database", () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ workers: false });
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it("tells which process differs and how, without revealing either key", async () => {
    const mine = { key: svc.deps.secret, source: "database" as const };
    expect(await keyMismatch(svc.deps.db, mine)).toBeNull();
    const other = Buffer.alloc(32, 7);
    const said = await keyMismatch(svc.deps.db, { key: other, source: "config" });
    expect(said).toContain("MNEMO_SECRET_KEY set to another key");
    expect(said).toContain(keyFingerprint(svc.deps.secret));
    expect(said).toContain(keyFingerprint(other));
    expect(said).not.toContain(other.toString("hex"));
    expect(said).not.toContain(svc.deps.secret.toString("hex"));
    // The last start ran with the other key: this one now differs from it, and says it has none set.
    expect(await keyMismatch(svc.deps.db, mine)).toMatch(/no MNEMO_SECRET_KEY/);
    expect(await keyMismatch(svc.deps.db, mine)).toBeNull();
  });

  it("a real second process started with another key warns at start-up; one with the same key does not", async () => {
    const secret = "server-key-test-secret-0123456789-abcdefgh";
    let server: ServerProcess | undefined;
    const others: MnemoProcess[] = [];
    try {
      server = await startServerProcess({ MNEMO_SECRET_KEY: secret, LOG_LEVEL: "info" });
      const worker = (key: string) => {
        const p = spawnMnemo(["worker"], {
          MNEMO_DATA_DIR: server!.dataDir,
          // On PostgreSQL the server's database; embedded, the worker attaches to the server's.
          ...(onServer() ? { DATABASE_URL: server!.databaseUrl } : {}),
          MNEMO_EMBEDDING_DIM: String(TEST_EMBEDDING_DIM),
          MNEMO_SECRET_KEY: key,
          MNEMO_METRICS_PORT: "0",
          LOG_LEVEL: "info",
        });
        others.push(p);
        return p;
      };
      const same = worker(secret);
      await same.waitFor(/"msg":"ready"/, 90_000);
      expect(same.stdout() + same.stderr()).not.toContain("server_key_mismatch");
      const wrong = worker("another-secret-key-that-is-long-enough-000");
      const line = await wrong.waitFor(/"event":"server_key_mismatch"[^\n]*/, 90_000);
      expect(line[0]).toContain("MNEMO_SECRET_KEY set to another key");
    } finally {
      for (const p of others) await p.kill("SIGTERM");
      await server?.stop();
    }
  });
});

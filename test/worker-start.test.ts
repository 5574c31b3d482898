import { afterAll, describe, expect, it } from "vitest";
import {
  freePort,
  type MnemoProcess,
  type ServerProcess,
  spawnMnemo,
  startServerProcess,
} from "./helpers/process.js";

/**
 * Real processes: whether WordNet is read is per process, and a test process shared by several
 * files may have read it already.
 */
let server: ServerProcess | undefined;
let api: MnemoProcess | undefined;
afterAll(async () => {
  await api?.kill("SIGTERM");
  await server?.stop();
});

describe("a process that runs workers", () => {
  it("reads WordNet while starting, not in the middle of its first ingest job; an API-only process never does", async () => {
    server = await startServerProcess();
    const read = /"msg":"WordNet read"/;
    // Logged before "ready", which startServerProcess waited for.
    expect(server.process.stdout()).toMatch(read);
    const port = await freePort();
    api = spawnMnemo(["api"], {
      PORT: String(port),
      HOST: "127.0.0.1",
      DATABASE_URL: server.databaseUrl.replace("@/", "@localhost/"),
    });
    await api.waitFor(/"msg":"ready"/);
    const health = await fetch(`http://127.0.0.1:${port}/v1/memories?user_id=u`, {
      headers: { "x-api-key": server.key },
    });
    expect(health.status).toBe(200);
    expect(api.stdout()).not.toMatch(read);
  });
});

import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { App } from "../../rest/types.js";
import { createOrg } from "../../src/admin/orgs.js";
import { loadConfig } from "../../src/config.js";
import type { Deps } from "../../src/context.js";
import { createDb } from "../../src/db/db.js";
import { startEmbedded } from "../../src/db/embedded.js";
import type { OpenedDatabase } from "../../src/db/open.js";
import { type Logger, silentLogger } from "../../src/logger.js";
import { type Runtime, startRuntime } from "../../src/runtime.js";
import { TEST_EMBEDDING_DIM } from "./constants.js";
import { createTestDatabase, migratedTemplateDump, onServer } from "./test-db.js";

export interface TestService {
  app: App;
  deps: Deps;
  runtime: Runtime;
  connectionString: string;
  /** A fresh organisation with its own key: one per test keeps tests independent. */
  newOrg(name?: string): Promise<{ orgId: string; key: string }>;
  /** In-process HTTP call; `key` goes in x-api-key; a `body` object is sent as JSON. */
  request(method: string, path: string, options?: RequestOptions): Promise<TestResponse>;
  stop(): Promise<void>;
}

export interface RequestOptions {
  key?: string;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

/**
 * A whole service on its own copy of the migrated template database: the real runtime
 * (migrations, bootstrap, pg-boss, providers, app), without binding a port. The copy is an
 * in-memory PGlite, or with MNEMO_TEST_DATABASE_URL a database of its own on that server.
 */
export async function startTestService(
  options: { env?: Record<string, string>; workers?: boolean; log?: Logger } = {},
): Promise<TestService> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "mn-"));
  const config = loadConfig({
    LOG_LEVEL: "silent",
    MNEMO_EMBEDDING_DIM: String(TEST_EMBEDDING_DIM),
    MNEMO_DATA_DIR: dir,
    ...options.env,
  });
  const opened = await openTestDatabase(dir, config.MNEMO_DB_POOL_SIZE);
  const runtime = await startRuntime(
    config,
    options.log ?? silentLogger(),
    { api: true, worker: options.workers ?? true },
    { opened, listen: false },
  );
  const connectionString = opened.connectionString;
  const app = runtime.app!;
  return {
    app,
    deps: runtime.deps,
    runtime,
    connectionString,
    async newOrg(name = "test") {
      const o = await createOrg(runtime.deps.db, { name });
      return { orgId: o.org_id, key: o.api_key };
    },
    async request(method, p, opts = {}) {
      const headers: Record<string, string> = { ...opts.headers };
      if (opts.key) headers["x-api-key"] = opts.key;
      let body: string | undefined;
      if (opts.body !== undefined) {
        body = typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body);
        headers["content-type"] ??= "application/json";
      }
      const res = await app.request(p, { method, headers, ...(body !== undefined ? { body } : {}) });
      const text = await res.text();
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = undefined;
      }
      return { status: res.status, headers: res.headers, body: parsed, text };
    },
    stop: () => runtime.stop(),
  };
}

/** A fresh copy of the template: in-memory PGlite served over the wire, or a server database. */
async function openTestDatabase(dir: string, poolSize: number): Promise<OpenedDatabase> {
  if (onServer()) {
    const copy = await createTestDatabase();
    const db = createDb(copy.url, poolSize, async () => {
      await copy.drop();
      rmSync(dir, { recursive: true, force: true });
    });
    return { db, connectionString: copy.url, kind: "external" };
  }
  const embedded = await startEmbedded({
    dataDir: dir,
    maxConnections: 60,
    inMemory: true,
    loadDataDir: migratedTemplateDump(),
  });
  const db = createDb(
    embedded.connectionString,
    poolSize,
    async () => {
      await embedded.stop();
      rmSync(dir, { recursive: true, force: true });
    },
    true,
  );
  return { db, connectionString: embedded.connectionString, kind: "embedded" };
}

/** Polls `check` until it returns a truthy value (conditions, never fixed sleeps). */
export async function waitFor<T>(
  check: () => Promise<T | undefined | null | false>,
  options: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 20_000);
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error("waitFor: condition not met in time");
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 25));
  }
}

/** Runs `fn` with some settings of a running service changed, and puts them back after. */
export async function withConfig<T>(
  deps: Deps,
  values: Partial<Deps["config"]>,
  fn: () => Promise<T>,
): Promise<T> {
  const config = deps.config as Record<string, unknown>;
  const saved = Object.fromEntries(Object.keys(values).map((k) => [k, config[k]]));
  Object.assign(config, values);
  try {
    return await fn();
  } finally {
    Object.assign(config, saved);
  }
}

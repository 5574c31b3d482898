import { setTimeout } from "node:timers/promises";
import { createRoute, z } from "@hono/zod-openapi";
import { requestDb } from "../../src/context.js";
import { isMigrated } from "../../src/db/migrate.js";
import { isTooManyClients, TOO_MANY_CLIENTS } from "../../src/errors.js";
import { json } from "../schemas.js";
import type { App } from "../types.js";

const Health = z.object({ status: z.string() }).openapi("Health");

export function registerHealthRoutes(app: App) {
  app.openapi(
    createRoute({
      method: "get",
      path: "/healthz",
      tags: ["health"],
      summary: "Process is up",
      security: [],
      responses: { 200: { description: "Up", ...json(Health) } },
    }),
    (c) => c.json({ status: "ok" }, 200),
  );
  app.openapi(
    createRoute({
      method: "get",
      path: "/readyz",
      tags: ["health"],
      summary: "Database reachable and migrated",
      security: [],
      responses: {
        200: { description: "Ready", ...json(Health) },
        503: { description: "Not ready", ...json(Health) },
      },
    }),
    async (c) => {
      const deps = c.get("deps");
      // A database that stops answering with its connections open (paused, partitioned) would
      // hold the probe for as long: it answers within MNEMO_READYZ_TIMEOUT_MS whatever happens.
      const timer = new AbortController();
      const check = isMigrated(requestDb(deps)).then(
        (migrated) => (migrated ? "ready" : "migrations pending"),
        (err: unknown) => (isTooManyClients(err) ? TOO_MANY_CLIENTS : "database unreachable"),
      );
      const late = setTimeout(deps.config.MNEMO_READYZ_TIMEOUT_MS, "database not answering", {
        signal: timer.signal,
      }).catch(() => "database not answering");
      const status = await Promise.race([check, late]);
      timer.abort();
      return c.json({ status }, status === "ready" ? 200 : 503);
    },
  );
}

import { createRoute, z } from "@hono/zod-openapi";
import { isMigrated } from "../../src/db/migrate.js";
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
      try {
        if (await isMigrated(c.get("deps").db)) return c.json({ status: "ready" }, 200);
        return c.json({ status: "migrations pending" }, 503);
      } catch {
        return c.json({ status: "database unreachable" }, 503);
      }
    },
  );
}

import { OpenAPIHono } from "@hono/zod-openapi";
import { Scalar } from "@scalar/hono-api-reference";
import { registerMcpRoutes } from "../mcp/http.js";
import type { Deps } from "../src/context.js";
import { CoreError } from "../src/errors.js";
import { errorResponse } from "./errors.js";
import { requireAuth } from "./middleware/auth.js";
import { bodyRules } from "./middleware/body.js";
import { requestContext } from "./middleware/request.js";
import { registerGroupRoutes } from "./routes/groups.js";
import { registerHealthRoutes } from "./routes/health.js";
import { registerIngestRoutes } from "./routes/ingest.js";
import { registerMemoryRoutes } from "./routes/memories.js";
import { registerSearchRoutes } from "./routes/search.js";
import { registerServiceKeyRoutes } from "./routes/service-keys.js";
import { registerUsageRoutes } from "./routes/usage.js";
import { registerWebhookRoutes } from "./routes/webhooks.js";
import type { App, AppEnv } from "./types.js";
import { validationHook } from "./validation.js";

export const API_VERSION = "1.0.0";

/** The HTTP surface: thin routes over the core verbs. Nothing here queries the database itself. */
export function createApp(deps: Deps): App {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook as never });

  app.use("*", requestContext(deps));
  app.use("/v1/*", bodyRules(deps.config.MNEMO_MAX_BODY_BYTES));
  app.use("/v1/*", requireAuth(deps));

  registerHealthRoutes(app);
  registerIngestRoutes(app);
  registerSearchRoutes(app);
  registerMemoryRoutes(app);
  registerGroupRoutes(app);
  registerWebhookRoutes(app);
  registerUsageRoutes(app);
  registerServiceKeyRoutes(app);
  registerMcpRoutes(app, deps);

  app.openAPIRegistry.registerComponent("securitySchemes", "ApiKeyHeader", {
    type: "apiKey",
    in: "header",
    name: "x-api-key",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "BearerAuth", { type: "http", scheme: "bearer" });
  app.doc31("/openapi.json", {
    openapi: "3.1.0",
    info: {
      title: "Mnemo memory service",
      version: API_VERSION,
      description:
        "Long-term memory for AI agents. Errors use `{detail: {code, message}}`; field validation failures use " +
        "`{detail: [{loc, msg, type}]}` with status 422.",
    },
    security: [{ ApiKeyHeader: [] }, { BearerAuth: [] }],
  });
  app.get("/docs", Scalar({ url: "/openapi.json", pageTitle: "Mnemo API reference" }));

  const routes = () => app.routes.filter((r) => r.method !== "ALL");
  app.notFound((c) => {
    const path = c.req.path;
    const allowed = new Set(
      routes()
        .filter((r) => pathMatches(r.path, path))
        .map((r) => r.method),
    );
    if (allowed.size > 0) {
      return errorResponse(
        c,
        new CoreError("method_not_allowed", `${c.req.method} is not allowed on ${path}.`, {
          headers: { Allow: [...allowed].join(", ") },
        }),
      );
    }
    return errorResponse(c, new CoreError("not_found", `No route for ${c.req.method} ${path}.`));
  });
  app.onError((err, c) => errorResponse(c, err));
  return app;
}

function pathMatches(pattern: string, path: string): boolean {
  const re = new RegExp(
    `^${pattern.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\/:[^/]+/g, "/[^/]+")}/?$`,
  );
  return re.test(path);
}

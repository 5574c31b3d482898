import { OpenAPIHono } from "@hono/zod-openapi";
import { Scalar } from "@scalar/hono-api-reference";
import { createConsole } from "../console/app.js";
import type { Ctx, Deps } from "../src/context.js";
import { CoreError } from "../src/errors.js";
import { errorResponse } from "./errors.js";
import { requireAuth } from "./middleware/auth.js";
import { bodyRules } from "./middleware/body.js";
import { httpMetrics } from "./middleware/metrics.js";
import { requestContext } from "./middleware/request.js";
import { registerGroupRoutes } from "./routes/groups.js";
import { registerHealthRoutes } from "./routes/health.js";
import { registerIngestRoutes } from "./routes/ingest.js";
import { registerMemoryRoutes } from "./routes/memories.js";
import { registerMetricsRoute } from "./routes/metrics.js";
import { registerSearchRoutes } from "./routes/search.js";
import { registerServiceKeyRoutes } from "./routes/service-keys.js";
import { registerUsageRoutes } from "./routes/usage.js";
import { registerVariantRoutes } from "./routes/variant.js";
import { registerWebhookRoutes } from "./routes/webhooks.js";
import type { App, AppEnv } from "./types.js";
import { validationHook } from "./validation.js";

export const API_VERSION = "1.0.0";

/** A handler mounted at a path of its own (MCP at /mcp), given the request's core context. */
export type MountedHandler = (request: Request, ctx: Ctx) => Promise<Response>;

/**
 * The HTTP surface: thin routes over the core verbs. Nothing here queries the database itself.
 * `mounts` adds other surfaces behind the same body rules and authentication as /v1.
 */
export function createApp(deps: Deps, options: { mounts?: Record<string, MountedHandler> } = {}): App {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook as never });

  app.use("*", httpMetrics(deps.metrics));
  app.use("*", requestContext(deps));
  app.use("/v1/*", bodyRules(deps.config.MNEMO_MAX_BODY_BYTES));
  app.use("/v1/*", requireAuth(deps));

  registerHealthRoutes(app);
  registerMetricsRoute(app, deps.metrics, deps.config.MNEMO_METRICS_TOKEN);
  registerIngestRoutes(app);
  registerSearchRoutes(app);
  registerMemoryRoutes(app);
  registerVariantRoutes(app);
  registerGroupRoutes(app);
  registerWebhookRoutes(app);
  registerUsageRoutes(app);
  registerServiceKeyRoutes(app);
  for (const [path, handler] of Object.entries(options.mounts ?? {})) {
    app.use(path, bodyRules(deps.config.MNEMO_MAX_BODY_BYTES));
    app.use(path, requireAuth(deps));
    app.all(path, (c) => handler(c.req.raw, c.get("ctx")));
  }
  app.route("/console", createConsole(deps) as never);

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
        "Long-term memory for AI agents. Every error answer carries `{detail: {code, message, field?}}` and " +
        "`{error: {type, code, message, request_id, details?}}` (the `Error` component); a field failure with no " +
        "specific code keeps `detail` as `[{loc, msg, type}]` (the `ValidationError` component, `error.code` " +
        "`invalid_request`), status 422.",
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

import { OpenAPIHono } from "@hono/zod-openapi";
import { Scalar } from "@scalar/hono-api-reference";
import type { Context, MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import { createConsole } from "../console/app.js";
import type { Ctx, Deps } from "../src/context.js";
import { CoreError } from "../src/errors.js";
import { envelope, errorResponse } from "./errors.js";
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
import { withResponseHeaders } from "./schemas.js";
import type { App, AppEnv } from "./types.js";
import { validationHook } from "./validation.js";

export const API_VERSION = "1.0.0";

/** A surface mounted at a path of its own (MCP at /mcp). */
export interface Mount {
  /** Answers a request that passed the body rules and authentication, given its core context. */
  handle: (request: Request, ctx: Ctx) => Promise<Response>;
  /**
   * The surface's own shape of an error answer made in the REST shape (a refusal of the body
   * rules, authentication or rate limit, before `handle` ran, or an error it threw): MCP clients
   * read JSON-RPC errors, not `{detail, error}`.
   */
  refusal?: (res: Response) => Promise<Response>;
}

/**
 * The HTTP surface: thin routes over the core verbs. Nothing here queries the database itself.
 * `mounts` adds other surfaces behind the same body rules and authentication as /v1.
 */
/**
 * A browser's request to /mcp from a page (its `Origin`) is refused (403 `forbidden`) unless the
 * page is on this machine (localhost, 127.0.0.1, [::1]: an inspector, a local app) or
 * MNEMO_CORS_ORIGINS allows its origin: the MCP transport requires servers to check `Origin`
 * against DNS rebinding, where a page's own name is pointed at the server's address, so its
 * requests carry its own name as `Host` and `Origin` alike. A request without `Origin` (every
 * client that is no browser) passes.
 */
function pageOriginAllowed(allowed: readonly string[]): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const origin = c.req.header("origin");
    if (origin === undefined || allowed[0] === "*" || allowed.includes(origin)) return next();
    let host: string | null = null;
    try {
      host = new URL(origin).hostname;
    } catch {}
    if (host === "localhost" || host === "127.0.0.1" || host === "[::1]") return next();
    return envelope(
      c,
      403,
      "forbidden",
      `Requests from pages of the origin ${JSON.stringify(origin.slice(0, 200))} are not allowed; add it to MNEMO_CORS_ORIGINS to allow a browser client there.`,
    );
  };
}

/** Runs the rest of the chain, then gives an error answer the mount's own shape (Mount.refusal). */
function ownRefusals(refusal: (res: Response) => Promise<Response>): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    await next();
    if (c.res.status < 400) return;
    const res = await refusal(c.res);
    // Unset first: Hono copies the old answer's headers onto a new one (its content-length too).
    c.res = undefined;
    c.res = res;
  };
}

export function createApp(deps: Deps, options: { mounts?: Record<string, Mount> } = {}): App {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook as never });

  app.use("*", httpMetrics(deps.metrics));
  app.use("*", requestContext(deps));
  // Cross-origin calls from browsers, to the origins configured: before authentication, so that a
  // preflight (OPTIONS, no key) is answered.
  const origins = deps.config.MNEMO_CORS_ORIGINS;
  if (origins.length) {
    const allow = cors({
      origin: origins[0] === "*" ? "*" : origins,
      allowMethods: ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
      allowHeaders: [
        "authorization",
        "content-type",
        "x-api-key",
        "x-org-id",
        "x-request-id",
        "mcp-session-id",
        "mcp-protocol-version",
        "last-event-id",
        "x-mnemo-user-id",
        "x-mnemo-agent-id",
        "x-mnemo-app-id",
        "x-mnemo-namespace",
      ],
      exposeHeaders: [
        "x-request-id",
        "mcp-session-id",
        "retry-after",
        "ratelimit-limit",
        "ratelimit-remaining",
        "ratelimit-reset",
        "x-ratelimit-limit",
        "x-ratelimit-remaining",
        "x-ratelimit-daily-limit",
        "x-ratelimit-daily-remaining",
      ],
      maxAge: 600,
    });
    app.use("/v1/*", allow);
    for (const path of Object.keys(options.mounts ?? {})) app.use(path, allow);
  }
  app.use("/v1/*", bodyRules(deps.config.MNEMO_MAX_BODY_BYTES));
  app.use("/v1/*", requireAuth(deps));
  // Hono would hand `GET /v1/memories/search` to the memory-id route (a memory called "search"):
  // an authenticated /v1 request is checked against the route table first.
  let table: RouteTable | undefined;
  const routes = () => (table ??= routeTable(app.routes));
  app.use("/v1/*", async (c, next) => routeRefusal(c, routes()) ?? next());

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
  for (const [path, mount] of Object.entries(options.mounts ?? {})) {
    if (mount.refusal) app.use(path, ownRefusals(mount.refusal));
    app.use(path, pageOriginAllowed(origins));
    app.use(path, bodyRules(deps.config.MNEMO_MAX_BODY_BYTES));
    app.use(path, requireAuth(deps));
    app.all(path, (c) => mount.handle(c.req.raw, c.get("ctx")));
  }
  app.route("/console", createConsole(deps) as never);

  app.openAPIRegistry.registerComponent("securitySchemes", "ApiKeyHeader", {
    type: "apiKey",
    in: "header",
    name: "x-api-key",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "BearerAuth", { type: "http", scheme: "bearer" });
  // Generated once, at the first request (every route is registered by then).
  let document: ReturnType<typeof app.getOpenAPI31Document> | undefined;
  const generate = () =>
    withResponseHeaders(
      app.getOpenAPI31Document({
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
      }),
    );
  app.get("/openapi.json", (c) => {
    document ??= generate();
    return c.json(document);
  });
  app.get("/docs", Scalar({ url: "/openapi.json", pageTitle: "Mnemo API reference" }));

  app.notFound((c) => routeRefusal(c, routes()) ?? notFound(c));
  app.onError((err, c) => errorResponse(c, err));
  return app;
}

const notFound = (c: Context<AppEnv>) =>
  errorResponse(c, new CoreError("not_found", `No route for ${c.req.method} ${c.req.path}.`));

/**
 * The 404 or 405 a request gets when no route of its method takes its path; undefined when one does.
 * A refusal names the route it answered for (the template of a route of another method, or
 * "unmatched") in the request's `route`, for the metrics and the access log: Hono's own match may be
 * a parameter route that the table does not let take the path.
 */
function routeRefusal(c: Context<AppEnv>, table: RouteTable): Response | undefined {
  const taking = table(c.req.path);
  if (taking.length === 0) {
    c.set("route", "unmatched");
    return notFound(c);
  }
  const allowed = new Set(taking.map((r) => r.method));
  if (allowed.has(c.req.method === "HEAD" ? "GET" : c.req.method)) return undefined;
  c.set("route", taking[0]!.path);
  return errorResponse(
    c,
    new CoreError("method_not_allowed", `${c.req.method} is not allowed on ${c.req.path}.`, {
      headers: { Allow: [...allowed].join(", ") },
    }),
  );
}

/** The routes (method and template) that take a path. */
type RouteTable = (path: string) => { method: string; path: string }[];

/**
 * A path's routes, segment by segment. A trailing slash is part of the path (only the variant
 * family has slash routes), and a parameter never takes a word that another route has as a literal
 * in the same place: `/v1/memories/jobs` is the jobs list, never a memory "jobs".
 */
function routeTable(routes: ReadonlyArray<{ method: string; path: string }>): RouteTable {
  const shapes = routes
    .filter((r) => r.method !== "ALL")
    .map((r) => ({ method: r.method, path: r.path, segments: r.path.split("/") }));
  const prefix = (segments: string[], i: number) =>
    segments
      .slice(0, i)
      .map((s) => (s.startsWith(":") ? ":" : s))
      .join("/");
  const literals = new Map<string, Set<string>>();
  for (const { segments } of shapes) {
    segments.forEach((s, i) => {
      if (s.startsWith(":")) return;
      const key = prefix(segments, i);
      literals.set(key, (literals.get(key) ?? new Set()).add(s));
    });
  }
  const takes = (segments: string[], parts: string[]) =>
    segments.length === parts.length &&
    segments.every((s, i) => {
      const part = parts[i]!;
      if (!s.startsWith(":")) return s === part;
      return part !== "" && !literals.get(prefix(segments, i))?.has(part);
    });
  return (path) => {
    const parts = path.split("/");
    return shapes.filter((r) => takes(r.segments, parts)).map(({ method, path }) => ({ method, path }));
  };
}

import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { INNER_CALL, requireAuth } from "../rest/middleware/auth.js";
import { bodyRules } from "../rest/middleware/body.js";
import type { App } from "../rest/types.js";
import type { Deps } from "../src/context.js";
import { createRestClient } from "./rest-client.js";
import { resolveScope } from "./scope.js";
import { createMcpServer } from "./server.js";

/** Headers of the caller's request that the tools' REST calls carry on. */
const FORWARDED = ["x-api-key", "authorization", "x-org-id"] as const;

/**
 * Streamable HTTP at /mcp, behind the same body rules and auth middleware as /v1 (so keys, 401s
 * and rate limits are the same). Stateless: a new server and transport per request, because a
 * shared transport mixes up the replies of concurrent clients.
 */
export function registerMcpRoutes(app: App, deps: Deps) {
  app.use("/mcp", bodyRules(deps.config.MNEMO_MAX_BODY_BYTES));
  app.use("/mcp", requireAuth(deps));
  app.all("/mcp", async (c) => {
    if (c.req.method !== "POST") {
      // Stateless: no server-initiated stream to open (GET) and no session to end (DELETE).
      return c.json(
        { jsonrpc: "2.0", error: { code: -32000, message: "Method not allowed." }, id: null },
        405,
        {
          Allow: "POST",
        },
      );
    }
    // The tools' REST calls log under this request's id.
    const headers: Record<string, string> = { "x-request-id": c.get("requestId") };
    for (const name of FORWARDED) {
      const v = c.req.header(name);
      if (v !== undefined) headers[name] = v;
    }
    const client = createRestClient({
      // The /mcp request was counted against the rate limit; its tools' calls are not counted again.
      fetch: async (path, init) => app.request(path, init, { [INNER_CALL]: true }),
      headers,
    });
    const scope = resolveScope(deps.config, (n) => c.req.header(n), c.get("principal").userId);
    const server = createMcpServer({ client, scope, log: c.get("log") });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    try {
      return await transport.handleRequest(c.req.raw);
    } finally {
      // With JSON responses the answer is complete here; release the per-request server.
      await server.close().catch(() => {});
    }
  });
}

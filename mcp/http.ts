import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { Ctx, Deps } from "../src/context.js";
import { inProcessService } from "./in-process.js";
import { defaultScopeFor } from "./scope.js";
import { createMcpServer } from "./server.js";

/**
 * Streamable HTTP for /mcp. The HTTP app mounts it behind the same body rules and authentication
 * as /v1 (so keys, 401s and rate limits are the same) and hands over the request's core context:
 * the request was counted once there, and the tools call the verbs with that context, never
 * counting again. Stateless: a new server and transport per request, because a shared transport
 * mixes up the replies of concurrent clients.
 */
export function mcpHttpHandler(deps: Deps) {
  return async (request: Request, ctx: Ctx): Promise<Response> => {
    if (request.method !== "POST") {
      // Stateless: no server-initiated stream to open (GET) and no session to end (DELETE).
      return Response.json(
        { jsonrpc: "2.0", error: { code: -32000, message: "Method not allowed." }, id: null },
        { status: 405, headers: { Allow: "POST" } },
      );
    }
    const scope = defaultScopeFor(
      deps.config,
      (n) => request.headers.get(n) ?? undefined,
      ctx.principal.userId,
    );
    const server = createMcpServer({ service: inProcessService(async () => ctx), scope, log: ctx.log });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    try {
      return await transport.handleRequest(request);
    } finally {
      // With JSON responses the answer is complete here; release the per-request server.
      await server.close().catch(() => {});
    }
  };
}

import { JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";
import type { Mount } from "../rest/app.js";
import { admitRequest } from "../src/auth/admit.js";
import { createJwtVerifier, type JwtVerifier } from "../src/auth/jwt.js";
import type { Config } from "../src/config.js";
import type { Ctx, Deps } from "../src/context.js";
import { inProcessService } from "./in-process.js";
import { BoundedJsonTransport } from "./json-transport.js";
import { connectChecked } from "./params.js";
import { type DefaultScope, defaultScopeFor, HeaderNotUtf8 } from "./scope.js";
import { createMcpServer } from "./server.js";
import { envelopeProblem } from "./stdio-transport.js";

/**
 * Streamable HTTP for /mcp. The HTTP app mounts it behind the same body rules and authentication
 * as /v1 (so keys, 401s and rate limits are the same) and hands over the request's core context:
 * the request was counted once there, and its tool call runs with that context; each further
 * call of a JSON-RPC batch is counted on its own (`eachCallCounted`). Stateless: a new server and
 * transport per request, because a shared transport mixes up the replies of concurrent clients.
 */
export function mcpHttpHandler(deps: Deps) {
  // Built once, as the authentication middleware does: the JWKS cache lives as long as the app.
  const jwt = createJwtVerifier(deps.config);
  return async (request: Request, ctx: Ctx): Promise<Response> => {
    if (request.method !== "POST") {
      // Stateless: no server-initiated stream to open (GET) and no session to end (DELETE).
      return withDetail(
        Response.json(
          {
            jsonrpc: "2.0",
            error: { code: -32000, message: "Method not allowed: /mcp takes POST only." },
            id: null,
          },
          { status: 405, headers: { Allow: "POST" } },
        ),
      );
    }
    let scope: DefaultScope;
    try {
      scope = defaultScopeFor(deps.config, (n) => request.headers.get(n) ?? undefined, ctx.principal.userId);
    } catch (err) {
      if (!(err instanceof HeaderNotUtf8)) throw err;
      return invalidRequest(err.message, null);
    }
    // The body read here for JSON-RPC's own refusals (batchRefusal), then handed to the transport.
    const raw = request.headers.get("content-type")?.includes("application/json")
      ? await request
          .clone()
          .json()
          .catch(() => undefined)
      : undefined;
    const refusal = batchRefusal(raw);
    if (refusal) return invalidRequest(`Invalid Request: ${refusal.problem}`, refusal.id);
    const service = inProcessService(eachCallCounted(deps, request, ctx, jwt));
    const server = createMcpServer({ service, scope, log: ctx.log });
    const transport = new BoundedJsonTransport();
    await connectChecked(server, transport);
    try {
      const res = await transport.handleWithin(request, withoutCancelled(raw), callBoundMs(deps.config));
      return withDetail(Array.isArray(raw) ? await asBatch(res) : res);
    } finally {
      // With JSON responses the answer is complete here; release the per-request server.
      await server.close().catch(() => {});
    }
  };
}

/** /mcp as the HTTP app mounts it: the handler, and the refusals made before it as JSON-RPC errors. */
export const mcpHttpMount = (deps: Deps): Mount => ({
  handle: mcpHttpHandler(deps),
  refusal: asJsonRpcError,
});

/** The JSON-RPC code of a refusal made before the MCP server read the request, by its REST code. */
const RPC_CODES: Record<string, number> = {
  invalid_json: -32700,
  invalid_request: -32600,
  server_error: -32603,
};
const RPC_WORDS: Record<number, string> = { [-32700]: "Parse error", [-32600]: "Invalid Request" };

/**
 * An error answer in the REST shape (the body rules, authentication, the rate limit, an error the
 * handler threw) as a JSON-RPC error, the transport's own refusals' shape: its HTTP status and
 * headers kept, as Streamable HTTP has a server refuse input it cannot accept (the SDK's own server
 * transport answers an oversized body 413 with -32000 the same way), `id` null (the body was not
 * read as a message), and the spec's `detail` beside it. A body that is not UTF-8 is -32700 Parse
 * error, a bad URL -32600, an internal error -32603, any other refusal -32000 with its message.
 */
export async function asJsonRpcError(res: Response): Promise<Response> {
  if (!res.headers.get("content-type")?.includes("application/json")) return res;
  const body = (await res.clone().json()) as {
    jsonrpc?: unknown;
    detail?: { code?: unknown; message?: unknown };
  };
  if (body.jsonrpc !== undefined || typeof body.detail?.code !== "string") return res;
  const code = RPC_CODES[body.detail.code] ?? (res.status >= 500 ? -32603 : -32000);
  const detail = String(body.detail.message ?? "");
  const message = RPC_WORDS[code] ? `${RPC_WORDS[code]}: ${detail}` : detail;
  const headers = new Headers(res.headers);
  headers.delete("content-length");
  return Response.json(
    { jsonrpc: "2.0", error: { code, message }, id: null, detail: body.detail },
    { status: res.status, headers },
  );
}

/** A 400 with JSON-RPC's -32600 Invalid Request. */
const invalidRequest = (message: string, id: string | number | null) =>
  withDetail(Response.json({ jsonrpc: "2.0", error: { code: -32600, message }, id }, { status: 400 }));

/**
 * What the SDK's transport answers wrongly, refused as JSON-RPC 2.0 and the stdio transport do
 * (-32600 Invalid Request): an empty batch (it answered 202 and nothing), and JSON that is not a
 * JSON-RPC message, alone or in a batch (it answered -32700 Parse error, which is for text that is
 * not JSON). Undefined when the transport may take the body.
 */
function batchRefusal(raw: unknown): { id: string | number | null; problem: string } | undefined {
  if (raw === undefined) return undefined;
  if (Array.isArray(raw) && raw.length === 0) return { id: null, problem: "an empty batch" };
  for (const message of Array.isArray(raw) ? raw : [raw]) {
    // A batch holds messages, not batches (the stdio transport's words, "one message per line",
    // do not apply here).
    if (Array.isArray(message)) return { id: null, problem: "a batch holds messages, not batches" };
    if (!JSONRPCMessageSchema.safeParse(message).success) return envelopeProblem(message);
  }
  return undefined;
}

/**
 * A batch without the requests it cancels itself (a `notifications/cancelled` naming their id):
 * they are not run, and the rest of the batch is answered (202 and no body when nothing is left
 * to answer). MCP gives a cancelled request no reply, and the transport, answering in JSON, waited
 * for a reply to each request of the POST: the POST hung. A cancellation of a request in another
 * POST names none here (each POST has its own server) and is ignored, as the protocol does.
 */
function withoutCancelled(raw: unknown): unknown {
  if (!Array.isArray(raw)) return raw;
  const cancelled = new Set<unknown>();
  for (const m of raw) {
    if (m?.method === "notifications/cancelled" && !("id" in m)) cancelled.add(m.params?.requestId);
  }
  if (cancelled.size === 0) return raw;
  return raw.filter((m) => !("method" in m && "id" in m && cancelled.has(m.id)));
}

/**
 * How long one POST may take before its unanswered requests are answered -32001 (the transport's
 * bound, BoundedJsonTransport): the longest a tool call is meant to hold (an add_memory's wait
 * window, MNEMO_WAIT_SECONDS; a search's two model calls, each bounded by
 * MNEMO_LLM_REQUEST_TIMEOUT_MS), plus MNEMO_HTTP_REQUEST_TIMEOUT_MS for the database work around them.
 */
export const callBoundMs = (config: Config) =>
  config.MNEMO_WAIT_SECONDS * 1000 +
  2 * config.MNEMO_LLM_REQUEST_TIMEOUT_MS +
  config.MNEMO_HTTP_REQUEST_TIMEOUT_MS;

/**
 * A batch is answered with an array (JSON-RPC 2.0 §6), even when one reply is owed (a batch of one,
 * or requests beside notifications): the transport answered that one as the bare object.
 */
async function asBatch(res: Response): Promise<Response> {
  if (res.status !== 200 || !res.headers.get("content-type")?.includes("application/json")) return res;
  const body: unknown = await res.json();
  const headers = new Headers(res.headers);
  headers.delete("content-length");
  return Response.json(Array.isArray(body) ? body : [body], { status: 200, headers });
}

/**
 * The context for each tool call of one POST. Authentication counted the POST once: the first call
 * runs with that context; every further call (the other calls of a JSON-RPC batch) authenticates
 * and counts again, like a request of its own, and one over the limit is a `rate_limited` (or
 * `daily_cap_exceeded`) tool error while the calls before it ran. Counted rather than refused:
 * the SDK's transport accepts a batch whatever the protocol version and has no hook to refuse
 * one, and protocol 2025-03-26 (still supported, and the version a server must assume for a POST
 * without an MCP-Protocol-Version header, as a stateless server sees them) allows batches; only
 * 2025-06-18 removed them. Counting each call holds the limit and the daily cap for every version.
 */
function eachCallCounted(deps: Deps, request: Request, ctx: Ctx, jwt: JwtVerifier | undefined) {
  let first = true;
  return async (): Promise<Ctx> => {
    if (first) {
      first = false;
      return ctx;
    }
    const header = (name: string) => request.headers.get(name) ?? undefined;
    const credentials = {
      apiKey: header("x-api-key"),
      authorization: header("authorization"),
      orgId: header("x-org-id"),
    };
    const log = deps.log.child({ requestId: ctx.requestId });
    return (await admitRequest(deps, credentials, { requestId: ctx.requestId, log, jwt })).ctx;
  };
}

/** The spec's codes for the transport's own refusals, by status. */
const TRANSPORT_CODES: Record<number, string> = {
  400: "invalid_request",
  405: "method_not_allowed",
  406: "not_acceptable",
  415: "unsupported_media_type",
};

/**
 * The transport's own refusals (a method other than POST, a body that is not JSON-RPC, an Accept
 * without both JSON and event streams, a bad protocol version header) are JSON-RPC error objects, as MCP clients expect;
 * they also carry the spec's `detail`, so a client reading REST errors finds its code there. (The
 * hosted `error` object cannot sit beside them: JSON-RPC has its own `error`.)
 */
async function withDetail(res: Response): Promise<Response> {
  if (res.status < 400 || !res.headers.get("content-type")?.includes("application/json")) return res;
  const body = (await res.json()) as { error?: { message?: unknown }; detail?: unknown };
  if (body.detail === undefined) {
    const message = typeof body.error?.message === "string" ? body.error.message : "Bad request.";
    body.detail = { code: TRANSPORT_CODES[res.status] ?? "invalid_request", message };
  }
  const headers = new Headers(res.headers);
  headers.delete("content-length");
  return Response.json(body, { status: res.status, headers });
}

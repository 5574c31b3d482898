import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  ErrorCode,
  isJSONRPCErrorResponse,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type RequestId,
} from "@modelcontextprotocol/sdk/types.js";

/**
 * The SDK's Streamable HTTP transport for one stateless POST, answering in JSON, within a bound.
 * In JSON-response mode its answer waits for a reply to every request of the POST: one that never
 * gets a reply (a handler that never returns; a request cancelled while it ran, whose reply the
 * protocol withholds) held the POST, and the per-request server, forever, without a line in the
 * access log. After `boundMs` every request still unanswered gets -32001 Request timed out, so
 * the POST ends with the replies that did come.
 */
export class BoundedJsonTransport extends WebStandardStreamableHTTPServerTransport {
  private readonly answered = new Set<RequestId>();

  constructor() {
    super({ sessionIdGenerator: undefined, enableJsonResponse: true });
  }

  override async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if ((isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) && message.id !== undefined)
      this.answered.add(message.id);
    return super.send(message, options);
  }

  /** `handleRequest` with the body already read (`parsedBody`), answered within `boundMs`. */
  async handleWithin(request: Request, parsedBody: unknown, boundMs: number): Promise<Response> {
    const ids = requestIds(parsedBody);
    let timer: NodeJS.Timeout | undefined;
    const answer = this.handleRequest(request, parsedBody === undefined ? undefined : { parsedBody });
    if (ids.length > 0) {
      timer = setTimeout(() => {
        const message = `No answer within ${Math.round(boundMs / 1000)} s; the request may still complete.`;
        for (const id of ids) {
          if (this.answered.has(id)) continue;
          const error = { code: ErrorCode.RequestTimeout, message };
          this.send({ jsonrpc: "2.0", id, error }).catch((err: unknown) => this.onerror?.(err as Error));
        }
      }, boundMs);
    }
    try {
      return await answer;
    } finally {
      clearTimeout(timer);
    }
  }
}

/** The ids of the requests (not notifications) in a message or a batch. */
function requestIds(body: unknown): RequestId[] {
  const messages = Array.isArray(body) ? body : [body];
  return messages.flatMap((m) =>
    m && typeof m === "object" && "method" in m && "id" in m ? [(m as { id: RequestId }).id] : [],
  );
}

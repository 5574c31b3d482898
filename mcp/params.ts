import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  InitializeRequestSchema,
  type JSONRPCMessage,
  ListToolsRequestSchema,
  PingRequestSchema,
  type RequestId,
} from "@modelcontextprotocol/sdk/types.js";
import { valueAt } from "../src/wire/common.js";
import { TOOLS } from "./server.js";

/** The requests this server answers, with the SDK's own schema of each. */
const REQUESTS: Record<string, { safeParse(v: unknown): { success: boolean; error?: { issues: Issue[] } } }> =
  {
    initialize: InitializeRequestSchema,
    ping: PingRequestSchema,
    "tools/list": ListToolsRequestSchema,
    "tools/call": CallToolRequestSchema,
  };

interface Issue {
  code: string;
  path: PropertyKey[];
  message: string;
  expected?: string;
}

/**
 * Connects `server` to `transport` and answers a request whose params do not fit its method
 * (`tools/call` with `"arguments": null` or `[1]`, a `name` that is not a string, a `tools/list`
 * cursor that is a number) with JSON-RPC -32602 Invalid params and a message naming the field.
 * Left to the SDK, the handler's own parse throws, and the answer is -32603 Internal error whose
 * message is the raw Zod issue list. Argument values are still checked by the SDK against each
 * tool's input schema (an `isError` result, -32602 in its text).
 */
export async function connectChecked(
  server: { connect(transport: Transport): Promise<void> },
  transport: Transport,
): Promise<void> {
  const start = transport.start.bind(transport);
  // connect installs the SDK's dispatcher, then starts the transport: the check goes in front of
  // the dispatcher at that moment, before any message can arrive.
  transport.start = async () => {
    const dispatch = transport.onmessage;
    transport.onmessage = (message, extra) => {
      const refusal = invalidParams(message);
      if (!refusal) return dispatch?.(message, extra);
      transport.send(refusal).catch((err: unknown) => transport.onerror?.(err as Error));
    };
    await start();
  };
  await server.connect(transport);
}

/** The -32602 answer to a request whose params its method's schema refuses; undefined otherwise. */
export function invalidParams(message: JSONRPCMessage): JSONRPCMessage | undefined {
  if (!("method" in message) || !("id" in message)) return undefined;
  const schema = REQUESTS[message.method];
  const checked = schema?.safeParse({ method: message.method, params: message.params });
  if (checked?.success && message.method === "tools/call") return unknownTool(message);
  if (!checked || checked.success) return undefined;
  const issues = (checked.error?.issues ?? []).map((i) => describe(i, message));
  return {
    jsonrpc: "2.0",
    id: message.id,
    error: {
      code: ErrorCode.InvalidParams,
      message: `Invalid params for ${message.method}: ${issues.join("; ") || "malformed params"}.`,
    },
  };
}

const TOOL_NAMES = new Set(TOOLS.map((t) => t.name));

/**
 * A `tools/call` of a tool this server does not have is a protocol error, -32602 Invalid params
 * (MCP's error handling for tools lists unknown tools so): the SDK's McpServer answered it as an
 * `isError` result ("MCP error -32602: Tool x not found"), which reads as a tool that ran and failed.
 */
function unknownTool(message: JSONRPCMessage & { id: RequestId }): JSONRPCMessage | undefined {
  const name = (message as { params?: { name?: unknown } }).params?.name;
  if (typeof name !== "string" || TOOL_NAMES.has(name)) return undefined;
  return {
    jsonrpc: "2.0",
    id: message.id,
    error: {
      code: ErrorCode.InvalidParams,
      message: `Unknown tool: ${JSON.stringify(name.slice(0, 200))}; tools/list names the tools.`,
    },
  };
}

const TYPE_NAMES: Record<string, string> = {
  record: "an object",
  object: "an object",
  array: "an array",
  string: "a string",
  number: "a number",
  int: "an integer",
  boolean: "true or false",
};

/** One issue as a sentence: `params.arguments` must be an object (the tool's arguments by name), not null. */
function describe(issue: Issue, message: unknown): string {
  const field = issue.path.map(String).join(".") || "params";
  if (issue.code !== "invalid_type" || !issue.expected) return `\`${field}\`: ${issue.message}`;
  const want = TYPE_NAMES[issue.expected] ?? issue.expected;
  const value = valueAt(message, issue.path);
  if (value === undefined) return `\`${field}\` is missing (${want} is required)`;
  const what = field === "params.arguments" ? " of the tool's arguments by name (or omitted)" : "";
  return `\`${field}\` must be ${want}${what}, not ${kindOf(value)}`;
}

const kindOf = (v: unknown) =>
  v === null ? "null" : Array.isArray(v) ? "an array" : typeof v === "object" ? "an object" : `a ${typeof v}`;

import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { toolError } from "./errors.js";
import type { DefaultScope } from "./scope.js";
import type { ToolDef, ToolEnv } from "./tool.js";
import { addMemoryTool } from "./tools/add-memory.js";
import { archiveGroupTool } from "./tools/archive-group.js";
import { createGroupTool } from "./tools/create-group.js";
import { deleteMemoryTool } from "./tools/delete-memory.js";
import { getIngestJobTool } from "./tools/get-ingest-job.js";
import { getMemoryTool } from "./tools/get-memory.js";
import { listGroupsTool } from "./tools/list-groups.js";
import { listMemoriesTool } from "./tools/list-memories.js";
import { memoryRevisionsTool } from "./tools/memory-revisions.js";
import { recallDirectivesTool } from "./tools/recall-directives.js";
import { searchMemoryTool } from "./tools/search-memory.js";
import { tagMemoryTool } from "./tools/tag-memory.js";
import { updateGroupTool } from "./tools/update-group.js";
import { updateMemoryTool } from "./tools/update-memory.js";

/** Every tool, in the order clients list them. Names are part of the interface. */
export const TOOLS: ToolDef<any>[] = [
  addMemoryTool,
  getIngestJobTool,
  searchMemoryTool,
  recallDirectivesTool,
  listMemoriesTool,
  getMemoryTool,
  deleteMemoryTool,
  memoryRevisionsTool,
  listGroupsTool,
  createGroupTool,
  updateGroupTool,
  archiveGroupTool,
  tagMemoryTool,
  updateMemoryTool,
];

/** The interface version the tools speak (the REST API's, see rest/app.ts). */
const SERVER_VERSION = "1.0.0";

const INSTRUCTIONS =
  "Long-term memory. Before answering, search_memory for what you know about the user or topic; after a " +
  "conversation that taught you something durable, add_memory. Before risky tool calls, recall_directives with " +
  "the pending call to get lessons learned earlier.";

/**
 * A server for one request (HTTP) or one session (stdio); tools reach the service through
 * `env.service`. The default scope is known up front (HTTP: the request's credential and headers)
 * or read before each call (stdio: the key's user is looked up once, on the first call).
 */
export function createMcpServer(
  env: Omit<ToolEnv, "scope"> & { scope: DefaultScope | (() => Promise<DefaultScope>) },
): McpServer {
  const server = new McpServer({ name: "mnemo", version: SERVER_VERSION }, { instructions: INSTRUCTIONS });
  for (const tool of TOOLS) {
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        // Strict: the SDK validates the arguments with this schema and lists it with
        // `additionalProperties: false`, so an argument the tool does not know is an error result
        // naming it (`Unrecognized key: "userId"`), as REST's 422 names it. Stripped, a misspelt
        // `userId` read as no user and listed the whole organisation with an org-wide key.
        inputSchema: z.strictObject(nullableInput(tool.input)) as never,
        outputSchema: tool.output,
        annotations: { title: tool.title, ...tool.annotations },
      },
      (async (args: unknown): Promise<CallToolResult> => {
        let scope: DefaultScope | undefined;
        try {
          scope = typeof env.scope === "function" ? await env.scope() : env.scope;
          const out = await tool.run(withoutNulls(args, tool.input) as never, { ...env, scope });
          return { content: [{ type: "text", text: out.text }], structuredContent: out.structured };
        } catch (err) {
          return toolError(err, env.log, args as Record<string, unknown>, scope);
        }
      }) as never,
    );
  }
  return server;
}

/**
 * A tool's input with every optional field also taking null, as the spec types them ("string or
 * null") and REST takes them: models send null for "none", and strict function calling writes
 * every optional field as nullable. Such calls were refused ("expected string, received null").
 * A field with a default (`wait`, `mode`, `limit`, `include_archived`) is optional too: null
 * there reads as left out, so the default applies (`withoutNulls`).
 */
function nullableInput(shape: z.ZodRawShape): z.ZodRawShape {
  return Object.fromEntries(
    Object.entries(shape).map(([key, field]) => {
      let nullable: z.ZodType;
      if (field instanceof z.ZodDefault) {
        nullable = z.nullable(field.unwrap() as z.ZodType).default(field.def.defaultValue as never);
      } else if (field instanceof z.ZodOptional && !(field.unwrap() instanceof z.ZodNullable)) {
        nullable = z.nullable(field.unwrap() as z.ZodType).optional();
      } else return [key, field];
      return [key, field.description ? nullable.describe(field.description) : nullable];
    }),
  );
}

/**
 * A tool's arguments with null read as the field left out (a null prompt: a catch-all group), and
 * a field with a default that was null given its default, as when it is left out.
 */
function withoutNulls(args: unknown, shape: z.ZodRawShape): unknown {
  if (!args || typeof args !== "object" || Array.isArray(args)) return args;
  const out: Record<string, unknown> = Object.fromEntries(Object.entries(args).filter(([, v]) => v !== null));
  for (const [key, field] of Object.entries(shape)) {
    if (out[key] === undefined && field instanceof z.ZodDefault) out[key] = field.parse(undefined);
  }
  return out;
}

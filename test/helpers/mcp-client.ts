import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { expect } from "vitest";
import type { App } from "../../rest/types.js";
import { childEnv, MAIN, ROOT } from "./process.js";

/** An SDK client of a spawned `mnemo mcp` (the compiled entry, MAIN) over stdio, its stderr kept. */
export async function stdioClient(env: Record<string, string>) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MAIN, "mcp"],
    cwd: ROOT,
    env: childEnv(env),
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (d) => {
    stderr += d;
  });
  const client = new Client({ name: "mnemo-stdio-test", version: "0.0.0" });
  await client.connect(transport);
  const { tools } = await client.listTools();
  return { client, tools, stderr: () => stderr };
}

/** An SDK client over Streamable HTTP; `app` routes the requests in-process, else real HTTP to `url`. */
export async function httpClient(options: {
  url: string;
  headers?: Record<string, string>;
  app?: App;
}): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(options.url), {
    requestInit: { headers: options.headers ?? {} },
    ...(options.app
      ? {
          fetch: (input: string | URL | Request, init?: RequestInit) =>
            Promise.resolve(options.app!.request(new Request(input, init))),
        }
      : {}),
  });
  const client = new Client({ name: "mnemo-test", version: "0.0.0" });
  await client.connect(transport);
  return client;
}

const ajv = new AjvJsonSchemaValidator();

/**
 * Calls a tool, expects success, and checks structuredContent against the output schema the
 * server listed (the client checks too; this makes the assertion explicit).
 */
export async function callOk(client: Client, tools: Tool[], name: string, args: Record<string, unknown>) {
  const res = (await client.callTool({ name, arguments: args })) as CallToolResult;
  if (res.isError) throw new Error(`${name} failed: ${text(res)}`);
  const tool = tools.find((t) => t.name === name);
  expect(tool?.outputSchema, `${name} lists an output schema`).toBeTruthy();
  const check = ajv.getValidator(tool!.outputSchema as never)(res.structuredContent);
  expect(check.valid, `${name} structuredContent: ${check.errorMessage ?? ""}`).toBe(true);
  expect(text(res).length).toBeGreaterThan(0);
  return { structured: res.structuredContent as any, text: text(res) };
}

/** Calls a tool and expects an error result; returns its text. */
export async function callErr(client: Client, name: string, args: Record<string, unknown>) {
  const res = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect(res.isError, `${name} should fail, got ${text(res)}`).toBe(true);
  return text(res);
}

export const text = (res: CallToolResult) =>
  res.content
    .filter((c) => c.type === "text")
    .map((c) => (c as { text: string }).text)
    .join("\n");

export const TOOL_NAMES = [
  "add_memory",
  "get_ingest_job",
  "search_memory",
  "recall_directives",
  "list_memories",
  "get_memory",
  "delete_memory",
  "memory_revisions",
  "list_groups",
  "create_group",
  "update_group",
  "archive_group",
  "tag_memory",
  "update_memory",
];

import type { Config } from "../src/config.js";

/** MCP over stdio (filled in by the MCP issue). */
export async function runStdio(_config: Config): Promise<void> {
  throw new Error("the mcp role is not available yet");
}

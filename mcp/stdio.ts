import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { type Config, ConfigError } from "../src/config.js";
import { createLogger, type Logger } from "../src/logger.js";
import { startRuntime } from "../src/runtime.js";
import { createRestClient, type RestClient } from "./rest-client.js";
import { scopeFromConfig } from "./scope.js";
import { createMcpServer } from "./server.js";

/**
 * MCP over stdio. Two ways to reach the memory service:
 * - `MNEMO_URL` set: a running server over HTTP, with `MNEMO_API_KEY`.
 * - otherwise the configured database (embedded data dir or `DATABASE_URL`), with the API and the
 *   workers started in this process (no port); calls go through the app in-process with
 *   `MNEMO_API_KEY`, else `MNEMO_BOOTSTRAP_API_KEY`, so they are authenticated like any REST call.
 * stdout is the protocol: logs go to stderr only.
 */
export async function runStdio(config: Config): Promise<void> {
  const log = createLogger({ level: config.LOG_LEVEL, stream: "stderr" });
  const { client, stop } = config.MNEMO_URL ? remote(config) : await local(config, log);
  const server = createMcpServer({ client, scope: scopeFromConfig(config), log });
  const transport = new StdioServerTransport();

  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once("end", () => resolve());
    process.once("SIGTERM", () => resolve());
    process.once("SIGINT", () => resolve());
  });
  await server.connect(transport);
  await closed;
  await server.close().catch(() => {});
  await stop();
}

function remote(config: Config): { client: RestClient; stop: () => Promise<void> } {
  const key = config.MNEMO_API_KEY;
  if (!key) throw new ConfigError("MNEMO_URL is set but MNEMO_API_KEY is not: set the key to use.");
  const base = config.MNEMO_URL!.replace(/\/+$/, "");
  const client = createRestClient({
    fetch: (path, init) => fetch(`${base}${path}`, { ...init, signal: AbortSignal.timeout(60_000) }),
    headers: { authorization: `Bearer ${key}` },
  });
  return { client, stop: async () => {} };
}

async function local(
  config: Config,
  log: Logger,
): Promise<{ client: RestClient; stop: () => Promise<void> }> {
  const rt = await startRuntime(config, log, { api: true, worker: true }, { listen: false });
  let key = config.MNEMO_API_KEY ?? config.MNEMO_BOOTSTRAP_API_KEY;
  if (!key && rt.createdKey) {
    key = rt.createdKey;
    process.stderr.write(
      `mnemo mcp: first start created organisation 'default' with this API key (shown once):\n  ${key}\n` +
        "Set MNEMO_API_KEY to it in the MCP client's configuration; without it the next start cannot pick an organisation.\n",
    );
  }
  if (!key) {
    await rt.stop();
    throw new ConfigError(
      "no API key to act with: set MNEMO_API_KEY (or MNEMO_BOOTSTRAP_API_KEY) to a key of the organisation to use.",
    );
  }
  const app = rt.app!;
  const client = createRestClient({
    fetch: async (path, init) => app.request(path, init),
    headers: { authorization: `Bearer ${key}` },
  });
  return { client, stop: () => rt.stop() };
}

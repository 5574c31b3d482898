import { randomUUID } from "node:crypto";
import { admitRequest } from "../src/auth/admit.js";
import { authenticate } from "../src/auth/authenticate.js";
import { createJwtVerifier } from "../src/auth/jwt.js";
import { type Config, ConfigError } from "../src/config.js";
import { isDatabaseUnavailable } from "../src/errors.js";
import type { Logger } from "../src/logger.js";
import { startRuntime } from "../src/runtime.js";
import { inProcessService } from "./in-process.js";
import { connectChecked } from "./params.js";
import type { MemoryService } from "./port.js";
import { remoteService } from "./remote.js";
import { type DefaultScope, defaultScopeFor } from "./scope.js";
import { createMcpServer } from "./server.js";
import { StdioLineTransport } from "./stdio-transport.js";

/**
 * MCP over stdio. Two ways to reach the memory service:
 * - `MNEMO_URL` set: a running server over HTTP, with `MNEMO_API_KEY`.
 * - otherwise the configured database (embedded data dir or `DATABASE_URL`), with the workers
 *   started in this process (no port); tools call the verbs in-process as `MNEMO_API_KEY`, else
 *   `MNEMO_BOOTSTRAP_API_KEY`: each tool call is authenticated and counted like one REST request.
 * stdout is the protocol: logs go to stderr only.
 */
export async function runStdio(config: Config, log: Logger, stopSignal: Promise<void>): Promise<void> {
  const { service, keyUser, stop } = config.MNEMO_URL ? remote(config) : await local(config, log);
  const server = createMcpServer({ service, scope: keyScope(config, keyUser), log });
  const transport = new StdioLineTransport(log);

  // The transport closes at the end of input once the requests it read are answered.
  const ended = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
  });
  await connectChecked(server, transport);
  // A stop signal (SIGTERM, SIGINT, SIGHUP) stops as the server does: one received during start-up
  // now that it has started; the requests already read are answered (a wait=true add_memory early,
  // its job pending) within the shutdown time-out, before the database is closed under them.
  await Promise.race([ended, stopSignal]);
  await stop(async (deadline) => {
    await transport.drain(deadline);
    await server.close().catch(() => {});
  });
}

/** The service, the user its key is confined to (null: organisation-wide), and how to stop it. */
interface Backend {
  service: MemoryService;
  keyUser: () => Promise<string | null>;
  /** Stops, after `inFlight` (the requests read) has had until the shutdown deadline it is given. */
  stop: (inFlight: (deadline: number) => Promise<void>) => Promise<void>;
}

/**
 * The default scope, as on /mcp: the user the key is confined to comes ahead of
 * MNEMO_DEFAULT_USER_ID (a key made for a user acts as that user). Looked up on the first tool
 * call and kept; a failed lookup fails that call with its error (unauthorized, unreachable) and
 * is tried again on the next.
 */
function keyScope(config: Config, keyUser: () => Promise<string | null>): () => Promise<DefaultScope> {
  let known: Promise<DefaultScope> | undefined;
  return () => {
    if (!known) {
      const lookup = keyUser().then((user) => defaultScopeFor(config, () => undefined, user));
      lookup.catch(() => {
        if (known === lookup) known = undefined;
      });
      known = lookup;
    }
    return known;
  };
}

function remote(config: Config): Backend {
  const key = config.MNEMO_API_KEY;
  if (!key) throw new ConfigError("MNEMO_URL is set but MNEMO_API_KEY is not: set the key to use.");
  const service = remoteService({
    baseUrl: config.MNEMO_URL!,
    headers: { authorization: `Bearer ${key}` },
    userClaim: config.MNEMO_JWT_USER_CLAIM,
  });
  return {
    service,
    keyUser: () => service.credentialUser(key),
    stop: (inFlight) => inFlight(Date.now() + config.MNEMO_SHUTDOWN_TIMEOUT_MS),
  };
}

async function local(config: Config, log: Logger): Promise<Backend> {
  const rt = await startBesideOthers(config, log);
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
  const jwt = createJwtVerifier(config);
  const credentials = { authorization: `Bearer ${key}` };
  const service = inProcessService(
    async () => {
      const requestId = randomUUID();
      const admitted = await admitRequest(rt.deps, credentials, {
        requestId,
        log: log.child({ requestId }),
        jwt,
      });
      return admitted.ctx;
    },
    { logCalls: true, maxBodyBytes: config.MNEMO_MAX_BODY_BYTES },
  );
  // Resolving the key is not a request: only tool calls are counted.
  const keyUser = async () => (await authenticate(rt.deps.db, credentials, { jwt })).userId;
  return { service, keyUser, stop: (inFlight) => rt.stop(inFlight) };
}

/** Start-up attempts when the database goes away under it (startBesideOthers). */
const START_ATTEMPTS = 5;

/**
 * The runtime of an in-process `mnemo mcp`. Attached beside another process on the data directory
 * (another IDE's `mnemo mcp`), it serves the database itself once the other is gone, as every
 * long-running process does (openDatabase). An owner that stops while this one is still starting (attached, its socket gone
 * under the start-up's queries) is met by starting again, a second later, as the owner this time:
 * it exited 1 ("connect ENOENT .../.s.PGSQL.5432"), and the MCP client saw the connection close.
 */
async function startBesideOthers(config: Config, log: Logger) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startRuntime(
        config,
        log,
        { api: false, worker: true },
        { listen: false, bootstrap: true },
      );
    } catch (err) {
      if (config.DATABASE_URL || attempt >= START_ATTEMPTS || !isDatabaseUnavailable(err)) throw err;
      log.warn({ err, attempt }, "the database went away during start-up; starting again");
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}
